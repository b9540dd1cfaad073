//! ns-2 movement files (the "scenario" files of CMU's `setdest`), read as ns-2 reads
//! them.
//!
//! # Format
//!
//! A movement file is Tcl that ns-2 sources. `setdest`
//! (indep-utils/cmu-scen-gen/setdest/setdest.cc) writes four kinds of lines:
//!
//! ```text
//! #  nodes: 2, pause: 0.00, max speed: 20.00, max x: 1500.00, max y: 300.00
//! $node_(0) set X_ 83.364418672126
//! $node_(0) set Y_ 239.442153047803
//! $node_(0) set Z_ 0.000000000000
//! $god_ set-dist 0 1 16777215
//! $ns_ at 2.000000000000 "$node_(0) setdest 1053.19 82.61 16.31"
//! $ns_ at 2.000000000000 "$god_ set-dist 0 1 1"
//! ```
//!
//! Read here: `$node_(i) set X_ v` and `set Y_ v` place node `i` at time 0;
//! `$ns_ at T "$node_(i) setdest X Y S"` sends it at `T` s from where it is then
//! towards (X, Y) at S m/s, replacing the leg under way ([`super::Path::set_destination`],
//! ns-2's `MobileNode::set_destination` in common/mobilenode.cc); a `setdest` outside
//! `$ns_ at` runs at time 0, as ns-2 runs it when it sources the file. Commands at the
//! same time run in file order (ns-2's scheduler takes equal times first come, first
//! served), and the file need not be in time order.
//!
//! Skipped: blank lines, `#` comments, and `$god_` lines, plain or under `$ns_ at`
//! (ns-2's GOD, the oracle of shortest hop counts, which airtrace does not need).
//! `set Z_` must be 0: nodes move on a plane. Anything else is an error, as is a timed
//! `set X_` (ns-2 would teleport the node; setdest never writes one).
//!
//! Not checked: ns-2 refuses a destination on or outside the edge of its topography
//! (`set_destination` returns -1); a movement file does not say the topography's size,
//! so destinations are taken as given.
//!
//! Errors are one line each, `FILE:LINE: what rule was broken`. Files are read whole,
//! up to [`MAX_FILE_BYTES`].

use std::path::Path as FsPath;

use thiserror::Error;

use super::{Mobility, Path, MAX_LEGS, MAX_SPEED_MPS};
use crate::radio::Position;

/// The largest movement file read, bytes (setdest's `$god_` lines make files of 50
/// nodes over 900 s a few megabytes).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The latest time a movement may happen at, s (about 116 days).
pub const MAX_TIME_S: f64 = 1e7;

/// The farthest a coordinate may be from 0, m.
pub const MAX_COORDINATE_M: f64 = 1e7;

/// The highest node number (`$node_(i)`): node ids are 16-bit, the last one broadcast.
pub const MAX_NODE: usize = 65_534;

/// The rule a line broke (see [`SetdestError::Invalid`]).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SetdestRule {
    /// A line that is none of the forms read.
    #[error("`{0}` is not a line of an ns-2 movement file (`$node_(i) set X_ v`, `$ns_ at T \"$node_(i) setdest X Y S\"`, `$god_ ...`, `# ...`)")]
    NotMovement(String),
    /// `$node_(` without a node number.
    #[error("`{0}` is not a node (`$node_(i)`, i from 0 to {MAX_NODE})")]
    BadNode(String),
    /// A value that is not a number.
    #[error("{what} `{text}` is not a number")]
    NotANumber {
        /// What the value is (a time, an x coordinate, ...).
        what: &'static str,
        /// The text.
        text: String,
    },
    /// A value out of its range.
    #[error("{what} {value} is out of range: {range}")]
    OutOfRange {
        /// What the value is.
        what: &'static str,
        /// The value.
        value: f64,
        /// The range allowed, in words.
        range: String,
    },
    /// `set Z_` to something other than 0.
    #[error("Z_ is {0}: airtrace's nodes move on a plane (Z_ 0)")]
    Height(f64),
    /// `set X_` under `$ns_ at`.
    #[error("a timed `set {0}` would teleport the node; move it with setdest")]
    TimedSet(char),
    /// More `setdest` lines than [`MAX_LEGS`].
    #[error("more than {MAX_LEGS} setdest lines")]
    TooManyLegs,
}

/// Why a movement file could not be read or used.
#[derive(Debug, Error)]
pub enum SetdestError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file, as given.
        file: String,
        /// The reason.
        source: std::io::Error,
    },
    /// A line broke a rule; displays as `FILE:LINE: rule`.
    #[error("{file}:{line}: {rule}")]
    Invalid {
        /// The file.
        file: String,
        /// The line, from 1.
        line: usize,
        /// What was wrong.
        rule: SetdestRule,
    },
    /// The file moves another number of nodes than the network has.
    #[error("{file}: moves {file_nodes} nodes ($node_(0) … $node_({})), the network has {nodes}", file_nodes.saturating_sub(1))]
    NodeCount {
        /// The file.
        file: String,
        /// 1 + its highest node number (0 for a file naming none).
        file_nodes: usize,
        /// The network's nodes.
        nodes: usize,
    },
}

/// One `setdest`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Move {
    t_ns: i64,
    node: usize,
    to: Position,
    speed_mps: f64,
}

/// A movement file, read (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq)]
pub struct MovementFile {
    name: String,
    /// Per node (1 + the highest node number): the place `set X_` / `set Y_` give.
    places: Vec<(Option<f64>, Option<f64>)>,
    /// In time order, equal times in file order.
    moves: Vec<Move>,
}

impl MovementFile {
    /// Parses the text of a movement file; `name` (its file) prefixes errors.
    pub fn parse(name: &str, text: &str) -> Result<Self, SetdestError> {
        let mut file = MovementFile {
            name: name.to_owned(),
            places: Vec::new(),
            moves: Vec::new(),
        };
        for (index, raw) in text.lines().enumerate() {
            file.line(raw.trim())
                .map_err(|rule| SetdestError::Invalid {
                    file: name.to_owned(),
                    line: index + 1,
                    rule,
                })?;
        }
        // Stable: equal times keep their file order.
        file.moves.sort_by_key(|m| m.t_ns);
        Ok(file)
    }

    /// Reads and parses the movement file at `path`; errors name the file as given.
    pub fn load(path: impl AsRef<FsPath>) -> Result<Self, SetdestError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let io = |source| SetdestError::Io {
            file: file.clone(),
            source,
        };
        // Read through the bound, not by the size the file reports: a device
        // (/dev/zero) reports 0 bytes and never ends.
        let text = airtrace_link::input::read_text(path, MAX_FILE_BYTES).map_err(io)?;
        Self::parse(&file, &text)
    }

    /// The number of nodes it moves: 1 + the highest node number in it.
    pub fn nodes(&self) -> usize {
        self.places.len()
    }

    /// The movement of a network whose nodes stand at `layout` (one place per node)
    /// unless the file places them: every node starts where its last `set X_` / `set
    /// Y_` puts it, else where `layout` has it. The file must move exactly
    /// `layout.len()` nodes.
    pub fn mobility(&self, layout: &[Position]) -> Result<Mobility, SetdestError> {
        if layout.len() != self.nodes() {
            return Err(SetdestError::NodeCount {
                file: self.name.clone(),
                file_nodes: self.nodes(),
                nodes: layout.len(),
            });
        }
        let mut paths: Vec<Path> = layout
            .iter()
            .zip(&self.places)
            .map(|(p, &(x, y))| {
                Path::new(Position {
                    x: x.unwrap_or(p.x),
                    y: y.unwrap_or(p.y),
                })
            })
            .collect();
        for m in &self.moves {
            paths[m.node].set_destination(m.t_ns, m.to, m.speed_mps);
        }
        Ok(Mobility::new(paths))
    }

    /// Takes in one trimmed line.
    fn line(&mut self, line: &str) -> Result<(), SetdestRule> {
        if line.is_empty() || line.starts_with('#') || is_god(line) {
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("$ns_") {
            let not_movement = || SetdestRule::NotMovement(line.to_owned());
            let rest = rest
                .trim_start()
                .strip_prefix("at")
                .ok_or_else(not_movement)?;
            let (time, command) = rest
                .trim_start()
                .split_once(char::is_whitespace)
                .ok_or_else(not_movement)?;
            let t_s = number("a time", time, 0.0, MAX_TIME_S, "0 to 1e7 s")?;
            let command = command
                .trim()
                .strip_prefix('"')
                .and_then(|c| c.strip_suffix('"'))
                .ok_or_else(not_movement)?
                .trim();
            if is_god(command) {
                return Ok(());
            }
            return self.command(command, Some(t_s), line);
        }
        self.command(line, None, line)
    }

    /// A `$node_(i) ...` command, at `t_s` under `$ns_ at`, else at the start.
    fn command(&mut self, command: &str, t_s: Option<f64>, line: &str) -> Result<(), SetdestRule> {
        let words: Vec<&str> = command.split_whitespace().collect();
        let coordinate = |what, text| {
            number(
                what,
                text,
                -MAX_COORDINATE_M,
                MAX_COORDINATE_M,
                "-1e7 to 1e7 m",
            )
        };
        match words.as_slice() {
            [node, "set", axis @ ("X_" | "Y_" | "Z_"), value] => {
                let node = self.node(node)?;
                let axis = axis.as_bytes()[0] as char;
                if t_s.is_some() {
                    return Err(SetdestRule::TimedSet(axis));
                }
                let v = coordinate("a coordinate", value)?;
                let place = &mut self.places[node];
                match axis {
                    'X' => place.0 = Some(v),
                    'Y' => place.1 = Some(v),
                    _ if v != 0.0 => return Err(SetdestRule::Height(v)),
                    _ => {}
                }
                Ok(())
            }
            [node, "setdest", x, y, speed] => {
                let node = self.node(node)?;
                if self.moves.len() >= MAX_LEGS {
                    return Err(SetdestRule::TooManyLegs);
                }
                let to = Position {
                    x: coordinate("x", x)?,
                    y: coordinate("y", y)?,
                };
                let speed_mps = number("a speed", speed, 0.0, MAX_SPEED_MPS, "0 to 1000 m/s")?;
                self.moves.push(Move {
                    t_ns: (t_s.unwrap_or(0.0) * 1e9).round() as i64,
                    node,
                    to,
                    speed_mps,
                });
                Ok(())
            }
            _ => Err(SetdestRule::NotMovement(line.to_owned())),
        }
    }

    /// The number of `$node_(i)`, making room for it.
    fn node(&mut self, word: &str) -> Result<usize, SetdestRule> {
        let i = word
            .strip_prefix("$node_(")
            .and_then(|w| w.strip_suffix(')'))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&i| i <= MAX_NODE)
            .ok_or_else(|| SetdestRule::BadNode(word.to_owned()))?;
        if self.places.len() <= i {
            self.places.resize(i + 1, (None, None));
        }
        Ok(i)
    }
}

fn is_god(command: &str) -> bool {
    command
        .strip_prefix("$god_")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
}

/// `text` as a finite number in `lo ..= hi`.
fn number(
    what: &'static str,
    text: &str,
    lo: f64,
    hi: f64,
    range: &str,
) -> Result<f64, SetdestRule> {
    let value: f64 = text.parse().map_err(|_| SetdestRule::NotANumber {
        what,
        text: text.to_owned(),
    })?;
    if !(lo..=hi).contains(&value) {
        return Err(SetdestRule::OutOfRange {
            what,
            value,
            range: range.to_owned(),
        });
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn error(text: &str) -> String {
        MovementFile::parse("m.scen", text).unwrap_err().to_string()
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        assert_eq!(
            error("# c\n$node_(0) set X_ 1\n$node_(0) set W_ 1\n"),
            "m.scen:3: `$node_(0) set W_ 1` is not a line of an ns-2 movement file \
             (`$node_(i) set X_ v`, `$ns_ at T \"$node_(i) setdest X Y S\"`, `$god_ ...`, `# ...`)"
        );
        assert_eq!(
            error("$node_(x) set X_ 1\n"),
            "m.scen:1: `$node_(x)` is not a node (`$node_(i)`, i from 0 to 65534)"
        );
        assert_eq!(
            error("\n$ns_ at 1.0 \"$node_(0) setdest 1 2 fast\"\n"),
            "m.scen:2: a speed `fast` is not a number"
        );
        assert_eq!(
            error("$ns_ at -1 \"$node_(0) setdest 1 2 3\"\n"),
            "m.scen:1: a time -1 is out of range: 0 to 1e7 s"
        );
        assert_eq!(
            error("$ns_ at 1 \"$node_(0) setdest 1 2 3e3\"\n"),
            "m.scen:1: a speed 3000 is out of range: 0 to 1000 m/s"
        );
        assert_eq!(
            error("$ns_ at 1 \"$node_(0) setdest NaN 2 3\"\n"),
            "m.scen:1: x NaN is out of range: -1e7 to 1e7 m"
        );
        assert_eq!(
            error("$node_(0) set Z_ 2.5\n"),
            "m.scen:1: Z_ is 2.5: airtrace's nodes move on a plane (Z_ 0)"
        );
        assert_eq!(
            error("$ns_ at 3 \"$node_(0) set X_ 2.5\"\n"),
            "m.scen:1: a timed `set X` would teleport the node; move it with setdest"
        );
        assert!(error("$ns_ at 3 $node_(0) setdest 1 2 3\n").starts_with("m.scen:1: `$ns_ at 3"));
        assert!(error("$ns_ at 3\n").starts_with("m.scen:1: "));
        assert!(error("$godfather_ set-dist 0 1 2\n").starts_with("m.scen:1: "));
    }

    #[test]
    fn an_endless_file_is_refused_at_the_bound() {
        let e = MovementFile::load("/dev/zero").unwrap_err().to_string();
        assert_eq!(
            e,
            format!("/dev/zero: cannot read: larger than the limit of {MAX_FILE_BYTES} bytes")
        );
    }

    #[test]
    fn the_node_count_must_match_the_network() {
        let file = MovementFile::parse("m.scen", "$node_(2) set X_ 1\n").unwrap();
        assert_eq!(file.nodes(), 3);
        assert_eq!(
            file.mobility(&[Position::default(); 2])
                .unwrap_err()
                .to_string(),
            "m.scen: moves 3 nodes ($node_(0) … $node_(2)), the network has 2"
        );
    }

    #[test]
    fn commands_run_in_time_order_and_equal_times_in_file_order() {
        let text = "\
$node_(0) set X_ 0.0
$node_(0) set Y_ 0.0
$ns_ at 10.0 \"$node_(0) setdest 0.0 50.0 5.0\"
$ns_ at 2.0 \"$node_(0) setdest 100.0 0.0 10.0\"
$ns_ at 10.0 \"$node_(0) setdest 80.0 0.0 20.0\"
";
        let mut m = MovementFile::parse("m", text)
            .unwrap()
            .mobility(&[Position::default()])
            .unwrap();
        // 2 s → 10 s east at 10 m/s: (80, 0); at 10 s the two setdests run in file
        // order, the last one winning: it is already at (80, 0), so it rests there.
        assert_eq!(m.position(0, 10 * S), Position { x: 80.0, y: 0.0 });
        assert_eq!(m.position(0, 20 * S), Position { x: 80.0, y: 0.0 });
        assert_eq!(m.path(0).legs().len(), 3);
    }
}
