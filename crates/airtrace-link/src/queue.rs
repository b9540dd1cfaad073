//! Drop-tail FIFO queue, limited in packets or in bytes.
//!
//! The queue holds items of any type `T` (a packet, a handle to one, a test label) with
//! the byte length given at [`DropTail::enqueue`]. A packet that would take the queue
//! over its limit is refused and handed back; nothing already queued is ever dropped.
//!
//! ```
//! use airtrace_link::queue::{DropTail, QueueLimit};
//!
//! let mut q = DropTail::new(QueueLimit::Bytes(3000));
//! assert!(q.enqueue("a", 1500).is_ok());
//! assert!(q.enqueue("b", 1500).is_ok()); // exactly at the limit
//! assert_eq!(q.enqueue("c", 1), Err("c")); // one byte too many
//! assert_eq!(q.dequeue(), Some(("a", 1500)));
//! ```

use std::collections::VecDeque;

/// How much a [`DropTail`] queue may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets, whatever their size.
    Packets(usize),
    /// At most this many bytes in total, whatever the number of packets. A packet
    /// larger than the limit is always dropped.
    Bytes(usize),
}

/// A first-in first-out queue that drops arriving packets when full.
#[derive(Debug, Clone)]
pub struct DropTail<T> {
    limit: QueueLimit,
    items: VecDeque<(T, usize)>,
    bytes: usize,
}

impl<T> DropTail<T> {
    /// An empty queue with the given limit.
    pub fn new(limit: QueueLimit) -> Self {
        Self {
            limit,
            items: VecDeque::new(),
            bytes: 0,
        }
    }

    /// Appends `item` of `len` bytes if it fits within the limit; otherwise returns it
    /// unchanged as `Err(item)` (a tail drop).
    pub fn enqueue(&mut self, item: T, len: usize) -> Result<(), T> {
        let fits = match self.limit {
            QueueLimit::Packets(max) => self.items.len() < max,
            QueueLimit::Bytes(max) => self.bytes.checked_add(len).is_some_and(|b| b <= max),
        };
        if !fits {
            return Err(item);
        }
        self.bytes += len;
        self.items.push_back((item, len));
        Ok(())
    }

    /// Removes the oldest item, with its byte length.
    pub fn dequeue(&mut self) -> Option<(T, usize)> {
        let (item, len) = self.items.pop_front()?;
        self.bytes -= len;
        Some((item, len))
    }

    /// Number of queued packets.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Total length of the queued packets, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The limit the queue was built with.
    pub fn limit(&self) -> QueueLimit {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_limit_boundary() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert_eq!(q.enqueue(1, 9000), Ok(())); // size does not matter
        assert_eq!(q.enqueue(2, 9000), Ok(())); // just fits: 2 of 2
        assert_eq!(q.enqueue(3, 1), Err(3)); // just dropped: would be 3 of 2
        assert_eq!((q.len(), q.bytes()), (2, 18_000));
        assert_eq!(q.dequeue(), Some((1, 9000)));
        assert_eq!(q.enqueue(4, 1), Ok(())); // room again
        assert_eq!(q.dequeue(), Some((2, 9000)));
        assert_eq!(q.dequeue(), Some((4, 1)));
        assert_eq!(q.dequeue(), None);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn byte_limit_boundary() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert_eq!(q.enqueue('a', 1000), Ok(()));
        assert_eq!(q.enqueue('b', 2001), Err('b')); // just dropped: 3001 > 3000
        assert_eq!(q.enqueue('c', 2000), Ok(())); // just fits: 3000
        assert_eq!(q.enqueue('d', 0), Ok(())); // an empty packet still fits
        assert_eq!(q.enqueue('e', 1), Err('e'));
        assert_eq!((q.len(), q.bytes()), (3, 3000));
        assert_eq!(q.dequeue(), Some(('a', 1000)));
        assert_eq!(q.bytes(), 2000);
    }

    #[test]
    fn packet_larger_than_byte_limit_is_dropped_even_when_empty() {
        let mut q = DropTail::new(QueueLimit::Bytes(1500));
        assert_eq!(q.enqueue((), 1501), Err(()));
        assert_eq!(q.enqueue((), usize::MAX), Err(()));
        assert!(q.is_empty());
    }

    #[test]
    fn zero_limits_drop_everything() {
        let mut p = DropTail::new(QueueLimit::Packets(0));
        let mut b = DropTail::new(QueueLimit::Bytes(0));
        assert_eq!(p.enqueue(1, 0), Err(1));
        assert_eq!(b.enqueue(1, 1), Err(1));
        assert_eq!(b.enqueue(2, 0), Ok(())); // 0 bytes fit in 0
    }
}
