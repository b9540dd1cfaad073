//! The event queue: which component needs attention next, in integer nanoseconds.
//!
//! Components (a link direction, a TCP endpoint, an application) do not post events;
//! each only knows when it next needs to be polled (`poll_at`, `next_deadline`). The
//! scheduler keeps, per component, the earliest time it was asked to wake it and a
//! binary heap of (time, order, component). A deadline moved later leaves its early
//! entry in the heap: the component is then polled early, finds nothing due and
//! reports its real deadline again, which is cheaper than deleting from the heap.
//! Ties are broken by the order in which wake-ups were asked for, so a run is a pure
//! function of the scenario and the seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A component's number, given by the simulation.
pub type Component = u32;

/// The component that carries the packets (the link, or the network).
pub const CARRIER: Component = 0;

/// What a component other than [`CARRIER`] is: a side of a flow, or its application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowPart {
    /// A side of a flow: (flow, true for side a, the sender or RPC client).
    Side(usize, bool),
    /// The application of a flow.
    App(usize),
}

impl FlowPart {
    /// Its component number: three per flow after the carrier (side a, side b,
    /// application).
    pub fn component(self) -> Component {
        match self {
            FlowPart::Side(flow, side_a) => 1 + 3 * flow as Component + u32::from(!side_a),
            FlowPart::App(flow) => 1 + 3 * flow as Component + 2,
        }
    }

    /// The part numbered `c`; `None` for the carrier.
    pub fn of(c: Component) -> Option<FlowPart> {
        let c = c.checked_sub(1)?;
        let flow = (c / 3) as usize;
        Some(match c % 3 {
            0 => FlowPart::Side(flow, true),
            1 => FlowPart::Side(flow, false),
            _ => FlowPart::App(flow),
        })
    }
}

/// Wake-ups by time (see the [module documentation](self)).
#[derive(Debug, Default)]
pub struct Scheduler {
    heap: BinaryHeap<Reverse<(i64, u64, Component)>>,
    /// The earliest pending wake-up of each component; `i64::MAX` for none.
    earliest: Vec<i64>,
    order: u64,
}

impl Scheduler {
    /// A scheduler for `components` components.
    pub fn new(components: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            earliest: vec![i64::MAX; components],
            order: 0,
        }
    }

    /// Adds `more` components, numbered after the others.
    pub fn add_components(&mut self, more: usize) {
        self.earliest.resize(self.earliest.len() + more, i64::MAX);
    }

    /// Asks to poll `component` at `at_ns` (no effect when `None` or when it is
    /// already due at or before that time).
    pub fn wake(&mut self, component: Component, at_ns: Option<i64>) {
        let Some(at) = at_ns else { return };
        let slot = &mut self.earliest[component as usize];
        if at < *slot {
            *slot = at;
            self.order += 1;
            self.heap.push(Reverse((at, self.order, component)));
        }
    }

    /// The next component due and its time; `None` when nothing is pending.
    pub fn pop(&mut self) -> Option<(i64, Component)> {
        while let Some(Reverse((at, _, component))) = self.heap.pop() {
            let slot = &mut self.earliest[component as usize];
            if *slot == at {
                *slot = i64::MAX;
                return Some((at, component));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_in_order_and_stale_entries_skipped() {
        let mut s = Scheduler::new(3);
        s.wake(2, Some(50));
        s.wake(0, Some(10));
        s.wake(1, Some(10));
        s.wake(0, Some(30)); // later than pending: ignored
        s.wake(2, Some(20)); // earlier: replaces 50
        s.wake(1, None);
        assert_eq!(s.pop(), Some((10, 0)));
        assert_eq!(s.pop(), Some((10, 1)));
        assert_eq!(s.pop(), Some((20, 2)));
        assert_eq!(s.pop(), None, "the entry at 50 is stale");
    }
}
