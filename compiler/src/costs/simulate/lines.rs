//! The line table: the graph's nodes and statement values grouped by source line, and each
//! line's ledgers as the first forward pass records them.

use super::*;

/// A source line's index in [`Lines`].
pub(super) type LineId = u32;

/// The per-line figures being summed. Each line (a statement's site) gets a dense index once,
/// so an op adds to a slot of a vector instead of searching a map of sites; the indices are
/// those of the [`LineTable`] the run returns.
pub(super) struct Lines<'g> {
    /// The line of each node.
    pub(super) of_node: Vec<LineId>,
    /// The line of each of the graph's statement values.
    pub(super) of_value: Vec<LineId>,
    pub(super) sites: Vec<&'g Site>,
    /// Each line's figures; `None` until something is recorded for it (only lines with a
    /// record appear in the result).
    pub(super) figures: Vec<Option<LineMemory>>,
}

impl<'g> Lines<'g> {
    pub(super) fn new(graph: &'g Graph) -> Self {
        // As many lines as statement values, about (a statement of ops only adds one; a
        // statement run many times, none): reserved, not grown by copying a large model's.
        let capacity = graph.stmt_values.len();
        let mut lines = Lines {
            of_node: Vec::new(),
            of_value: Vec::new(),
            sites: Vec::with_capacity(capacity),
            figures: Vec::with_capacity(capacity),
        };
        // Sites are numbered through a dense table by file, item and node (a model's lines
        // are thousands of sites of a few files): no hashing per op.
        let mut files: Vec<(&'g FileName, Vec<Vec<LineId>>)> = Vec::new();
        let mut id = |site: &'g Site, previous: &mut Option<(&'g Site, LineId)>| {
            // Consecutive ops are mostly of one statement: no lookup for them.
            if let Some((p, id)) = *previous
                && p == site
            {
                return id;
            }
            let at = match files.iter().position(|(f, _)| *f == &site.file) {
                Some(at) => at,
                None => {
                    files.push((&site.file, Vec::new()));
                    files.len() - 1
                }
            };
            let items = &mut files[at].1;
            let (item, node) = (site.at.item as usize, site.at.node as usize);
            if items.len() <= item {
                items.resize(item + 1, Vec::new());
            }
            let nodes = &mut items[item];
            if nodes.len() <= node {
                if nodes.is_empty() {
                    // Room for a block's few dozen nodes at once, not a copy per statement.
                    nodes.reserve(node.max(63) + 1);
                }
                nodes.resize(node + 1, LineId::MAX);
            }
            if nodes[node] == LineId::MAX {
                lines.sites.push(site);
                lines.figures.push(None);
                nodes[node] = (lines.sites.len() - 1) as LineId;
            }
            *previous = Some((site, nodes[node]));
            nodes[node]
        };
        let mut previous = None;
        // Values first: the lines are numbered in the order they first finished running.
        let of_value: Vec<LineId> = graph.stmt_values.iter().map(|v| id(&v.origin.stmt, &mut previous)).collect();
        let of_node: Vec<LineId> = graph.nodes.iter().map(|n| id(&n.origin.stmt, &mut previous)).collect();
        lines.of_node = of_node;
        lines.of_value = of_value;
        lines
    }

    /// The figures of a line, from now on part of the result.
    pub(super) fn line(&mut self, id: LineId) -> &mut LineMemory {
        self.figures[id as usize].get_or_insert_with(LineMemory::default)
    }

    pub(super) fn finish(self) -> LineTable {
        LineTable {
            sites: self.sites.into_iter().cloned().collect::<Arc<[Site]>>(),
            of_node: self.of_node,
            of_value: self.of_value,
            memory: self.figures,
        }
    }
}

/// Records that `line` made storage `s`: always (`replace`), or if no line did before.
pub(super) fn made_by(producer: &mut Vec<Option<LineId>>, s: usize, line: LineId, replace: bool) {
    if producer.len() <= s {
        producer.resize(s + 1, None);
    }
    if replace || producer[s].is_none() {
        producer[s] = Some(line);
    }
}
