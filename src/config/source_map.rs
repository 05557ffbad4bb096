//! Where each key of a scenario file sits in the text.
//!
//! Built from the raw text with `yaml-rust2`'s event parser, independently of the typed
//! deserialisation, so that errors found after typing (duplicate addresses, waypoints outside
//! the world, ...) can still name a line.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Nodes nested deeper than this are not recorded (their lookups fall back to an ancestor);
/// this keeps the key-path strings, and so the map, linear in the input size.
const MAX_DEPTH: usize = 64;
/// At most this many key paths are recorded; a scenario has a few hundred.
const MAX_ENTRIES: usize = 200_000;
/// Collections may nest this deep. serde_yaml refuses deeper ones too (its recursion limit),
/// but only after its scanner has read the whole document, at a cost per token that grows
/// with the depth: deep nesting is refused here first, so loading stays linear in the input.
pub const MAX_NESTING: usize = 128;

/// What kind of node a key path leads to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum NodeKind {
    /// A plain or quoted scalar, with its text.
    Scalar(String),
    /// A sequence with this many items.
    Sequence(usize),
    /// A mapping with this many entries.
    Mapping(usize),
    /// An alias (`*name`) to an anchored node.
    Alias,
    /// Not seen yet (a key whose value was cut off by a syntax error).
    Unknown,
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// 1-based line of the key (mapping entries) or of the item (sequence items).
    pub line: usize,
    /// 1-based column of the same.
    pub column: usize,
    pub kind: NodeKind,
    /// Order of appearance in the text.
    pub order: usize,
}

/// The line and column of every key path of a YAML document.
///
/// Key paths use the same syntax as `serde_path_to_error`: mapping keys joined by `.`,
/// sequence indices in brackets, e.g. `vehicles[1].motion.waypoints[2]`; the document root is
/// the empty path. Only the first document of a multi-document stream is mapped, and the
/// content of anchored nodes is mapped where it is written, not where it is referred to.
/// Building a map never fails: on a syntax error the map holds what came before it.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    entries: HashMap<String, Entry>,
    /// Line and column where collections nest more than [`MAX_NESTING`] deep, if they do.
    too_deep: Option<(usize, usize)>,
    /// The scanner's error, if the text is not YAML: message, char index, line, column.
    syntax_error: Option<(String, usize, usize, usize)>,
    /// The first key written twice in one mapping, in text order.
    duplicate: Option<Duplicate>,
    /// Whether the first document is a null (`~`, `null` or nothing) rather than a
    /// collection or a value.
    root_null: bool,
}

/// A key written twice in one mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Duplicate {
    /// Key path of the key (that of the first occurrence); `None` where keys are not recorded
    /// (nested deeper than the map records).
    pub key_path: Option<String>,
    pub key: String,
    /// 1-based line and column of the second occurrence.
    pub line: usize,
    pub column: usize,
    /// 1-based line of the first occurrence.
    pub first_line: usize,
}

impl SourceMap {
    /// Maps `text`; never panics, whatever the input.
    pub fn parse(text: &str) -> SourceMap {
        let mut builder = Builder::default();
        let mut parser = Parser::new_from_str(text);
        // Drive the parser event by event instead of `Parser::load`, which recurses once per
        // nesting level and could overflow the stack on hostile input.
        loop {
            match parser.next_token() {
                Ok((Event::StreamEnd, _)) => break,
                Ok((event, mark)) => {
                    builder.on_event(event, mark);
                    if builder.done {
                        break;
                    }
                }
                // Syntax errors are reported by the typed pass, which has better positions.
                Err(e) => {
                    let m = e.marker();
                    builder.map.syntax_error =
                        Some((e.info().to_owned(), m.index(), m.line().max(1), m.col() + 1));
                    break;
                }
            }
        }
        builder.map
    }

    /// The 1-based line of `key_path` (of the key for mapping entries, of the item for
    /// sequence items), if the path exists in the text.
    pub fn line_of(&self, key_path: &str) -> Option<usize> {
        self.entries.get(key_path).map(|e| e.line)
    }

    /// The 1-based column of `key_path`, if the path exists in the text.
    pub fn column_of(&self, key_path: &str) -> Option<usize> {
        self.entries.get(key_path).map(|e| e.column)
    }

    /// Why the typed pass must not read `text` (the text this map was built from), if so:
    /// line, column and message of collections nested more than [`MAX_NESTING`] deep, or of a
    /// syntax error followed by more than [`MAX_NESTING`] flow collection openers (`[`, `{`),
    /// which could nest that deep for a parser that reads past the error.
    pub(crate) fn unreadable(&self, text: &str) -> Option<(usize, usize, String)> {
        if let Some((line, column)) = self.too_deep {
            return Some((
                line,
                column,
                format!("collections nested more than {MAX_NESTING} levels deep"),
            ));
        }
        let (info, index, line, column) = self.syntax_error.as_ref()?;
        let openers = text
            .chars()
            .skip(*index)
            .filter(|c| matches!(c, '[' | '{'))
            .take(MAX_NESTING + 1)
            .count();
        (openers > MAX_NESTING).then(|| {
            (
                *line,
                *column,
                format!(
                    "{info} (not read further: more than {MAX_NESTING} flow collections follow)"
                ),
            )
        })
    }

    /// Whether the text holds no document, or only a null one: nothing but comments, blank
    /// lines, `---` or `~`.
    pub(crate) fn is_empty_document(&self) -> bool {
        self.syntax_error.is_none() && (self.root_null || !self.entries.contains_key(""))
    }

    /// The first key written twice in one mapping, if the text is YAML (a duplicate before a
    /// syntax error is left to the syntax error).
    pub(crate) fn duplicate(&self) -> Option<&Duplicate> {
        self.duplicate
            .as_ref()
            .filter(|_| self.syntax_error.is_none())
    }

    /// Line, column and message of the scanner's error if it is about a tab where YAML allows
    /// none (in indentation), else `None`. The line and column are the tab's own (the scanner
    /// may stop after it, or at the start of the scalar it was reading): the first tab in a
    /// line's indentation from the scanner's line on, else the first tab on that line, else
    /// where the scanner stopped. `text` is the text this map was built from.
    pub(crate) fn tab_error<'a>(&'a self, text: &str) -> Option<(usize, usize, &'a str)> {
        let (info, _, line, column) = self.syntax_error.as_ref()?;
        if !info.contains("tab") {
            return None;
        }
        let lines = || text.lines().enumerate().skip(line - 1);
        let indenting = lines().find_map(|(n, l)| {
            l.chars()
                .take_while(|c| matches!(c, ' ' | '\t'))
                .position(|c| c == '\t')
                .map(|i| (n + 1, i + 1))
        });
        let on_line = || {
            lines()
                .next()
                .and_then(|(n, l)| l.chars().position(|c| c == '\t').map(|i| (n + 1, i + 1)))
        };
        let (line, column) = indenting.or_else(on_line).unwrap_or((*line, *column));
        Some((line, column, info.as_str()))
    }

    /// Whether `key_path` exists in the text.
    pub fn contains(&self, key_path: &str) -> bool {
        self.entries.contains_key(key_path)
    }

    /// Line and column of `key_path`, or of its nearest ancestor that exists in the text.
    pub(crate) fn nearest(&self, key_path: &str) -> Option<(usize, usize)> {
        let mut path = key_path;
        loop {
            if let Some(e) = self.entries.get(path) {
                return Some((e.line, e.column));
            }
            if path.is_empty() {
                return None;
            }
            path = parent_path(path);
        }
    }

    /// Entries strictly below `key_path`, in text order.
    pub(crate) fn descendants<'a>(&'a self, key_path: &str) -> Vec<(&'a str, &'a Entry)> {
        let mut found: Vec<(&str, &Entry)> = self
            .entries
            .iter()
            .filter(|(k, _)| is_descendant(k, key_path))
            .map(|(k, e)| (k.as_str(), e))
            .collect();
        found.sort_by_key(|(_, e)| e.order);
        found
    }
}

/// The key path one level up: `a.b[2]` → `a.b`, `a.b` → `a`, `a` → ``.
pub(crate) fn parent_path(path: &str) -> &str {
    match path.rfind(['.', '[']) {
        Some(i) => &path[..i],
        None => "",
    }
}

pub(crate) fn is_descendant(candidate: &str, ancestor: &str) -> bool {
    if ancestor.is_empty() {
        return !candidate.is_empty();
    }
    candidate.len() > ancestor.len()
        && candidate.starts_with(ancestor)
        && matches!(candidate.as_bytes()[ancestor.len()], b'.' | b'[')
}

/// Appends a mapping key to a path.
pub(crate) fn join_key(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// Appends a sequence index to a path.
pub(crate) fn join_index(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

enum Frame {
    Mapping {
        /// `None`: not recorded (too deep, a complex key's content, a later document).
        path: Option<String>,
        /// The path of the key whose value comes next; `None` while a key is expected.
        value_of: Option<Option<String>>,
        count: usize,
        /// The scalar keys seen so far, with the line of each.
        keys: HashMap<String, usize>,
    },
    Sequence {
        path: Option<String>,
        count: usize,
    },
}

#[derive(Default)]
struct Builder {
    map: SourceMap,
    stack: Vec<Frame>,
    documents: usize,
    order: usize,
    done: bool,
}

impl Builder {
    fn record(&mut self, path: &Option<String>, mark: Marker, kind: NodeKind) {
        let Some(path) = path else { return };
        if self.map.entries.len() >= MAX_ENTRIES {
            return;
        }
        self.order += 1;
        let entry = Entry {
            line: mark.line().max(1),
            column: mark.col() + 1,
            kind,
            order: self.order,
        };
        // A duplicate key keeps its first place; the typed pass reports the duplicate.
        self.map.entries.entry(path.clone()).or_insert(entry);
    }

    fn set_kind(&mut self, path: &Option<String>, kind: NodeKind) {
        if let Some(e) = path.as_ref().and_then(|p| self.map.entries.get_mut(p)) {
            if e.kind == NodeKind::Unknown {
                e.kind = kind;
            }
        }
    }

    /// Handles a node (scalar, alias, or the start of a collection) and returns the path it
    /// lives at, if recorded.
    fn node(&mut self, mark: Marker, kind: NodeKind) -> Option<String> {
        let depth_ok = self.stack.len() < MAX_DEPTH;
        match self.stack.last_mut() {
            None => {
                if self.documents > 1 {
                    return None;
                }
                let path = Some(String::new());
                self.record(&path, mark, kind);
                path
            }
            Some(Frame::Sequence { path, count }) => {
                let child = match path {
                    Some(p) if depth_ok => Some(join_index(p, *count)),
                    _ => None,
                };
                *count += 1;
                self.record(&child, mark, kind);
                child
            }
            Some(Frame::Mapping {
                path,
                value_of,
                count,
                keys,
            }) => match value_of.take() {
                None => {
                    // A key. Only scalar keys name a path; complex keys are skipped.
                    let child = match (&kind, &*path) {
                        (NodeKind::Scalar(key), Some(p)) if depth_ok => Some(join_key(p, key)),
                        _ => None,
                    };
                    if let NodeKind::Scalar(key) = &kind {
                        let line = mark.line().max(1);
                        match keys.get(key) {
                            Some(&first_line) if self.map.duplicate.is_none() => {
                                self.map.duplicate = Some(Duplicate {
                                    key_path: child.clone(),
                                    key: key.clone(),
                                    line,
                                    column: mark.col() + 1,
                                    first_line,
                                });
                            }
                            Some(_) => {}
                            None => {
                                keys.insert(key.clone(), line);
                            }
                        }
                    }
                    *count += 1;
                    *value_of = Some(child.clone());
                    self.record(&child, mark, NodeKind::Unknown);
                    // Keys live at no path of their own (a complex key's content is skipped).
                    None
                }
                Some(value_path) => {
                    self.set_kind(&value_path, kind);
                    value_path
                }
            },
        }
    }

    /// Stops at the first collection nested more than [`MAX_NESTING`] deep.
    fn check_depth(&mut self, mark: Marker) {
        if self.stack.len() > MAX_NESTING {
            self.map.too_deep = Some((mark.line().max(1), mark.col() + 1));
            self.done = true;
        }
    }

    fn end_collection(&mut self) {
        let frame = self.stack.pop();
        let (path, kind) = match frame {
            Some(Frame::Mapping { path, count, .. }) => (path, NodeKind::Mapping(count / 2)),
            Some(Frame::Sequence { path, count }) => (path, NodeKind::Sequence(count)),
            None => return,
        };
        if let Some(e) = path.as_ref().and_then(|p| self.map.entries.get_mut(p)) {
            e.kind = kind;
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        match event {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    self.done = true;
                }
            }
            Event::Scalar(value, style, ..) => {
                if self.stack.is_empty() && self.documents <= 1 {
                    self.map.root_null = style == TScalarStyle::Plain
                        && matches!(value.as_str(), "" | "~" | "null" | "Null" | "NULL");
                }
                self.node(mark, NodeKind::Scalar(value));
            }
            Event::Alias(_) => {
                self.node(mark, NodeKind::Alias);
            }
            Event::SequenceStart(..) => {
                // `None` for a collection used as a key: its content has no path.
                let path = self.node(mark, NodeKind::Sequence(0));
                self.stack.push(Frame::Sequence { path, count: 0 });
                self.check_depth(mark);
            }
            Event::MappingStart(..) => {
                let path = self.node(mark, NodeKind::Mapping(0));
                self.stack.push(Frame::Mapping {
                    path,
                    value_of: None,
                    count: 0,
                    keys: HashMap::new(),
                });
                self.check_depth(mark);
            }
            Event::SequenceEnd | Event::MappingEnd => self.end_collection(),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}
