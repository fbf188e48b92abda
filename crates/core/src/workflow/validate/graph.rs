//! The steps as a graph: `needs` that name real steps, cycles reported with their path,
//! a topological order (file order among steps ready together), and which steps are
//! upstream of which.

use super::{Pending, Validator};
use petgraph::graphmap::DiGraphMap;
use std::collections::{BTreeSet, HashMap};

impl Validator<'_, '_, '_> {
    /// Finds cycles (reporting each with its path) and returns a topological order:
    /// file order among steps that are ready at the same time.
    pub(super) fn graph(&mut self, pending: &[Pending]) -> Option<Vec<usize>> {
        let index: HashMap<&str, usize> = pending
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.value.as_str(), i))
            .collect();
        let mut g: DiGraphMap<usize, ()> = DiGraphMap::new();
        for i in 0..pending.len() {
            g.add_node(i);
        }
        for (i, p) in pending.iter().enumerate() {
            for n in &p.needs {
                if let Some(&j) = index.get(n.value.as_str()) {
                    g.add_edge(j, i, ());
                }
            }
        }
        let mut cyclic = false;
        for scc in petgraph::algo::tarjan_scc(&g) {
            if scc.len() < 2 {
                continue;
            }
            cyclic = true;
            let members: BTreeSet<usize> = scc.iter().copied().collect();
            let start = *members.iter().next().expect("an SCC is never empty");
            let path = cycle_path(&g, start, &members);
            let names: Vec<&str> = path.iter().map(|&i| pending[i].id.value.as_str()).collect();
            // Point at the need that closes the cycle: `start` needing the last step.
            let last = path[path.len() - 2];
            let span = pending[start]
                .needs
                .iter()
                .find(|n| n.value == pending[last].id.value)
                .map_or(pending[start].raw_span.clone(), |n| n.span.clone());
            self.ctx.error(
                span,
                format!(
                    "the steps form a cycle through their `needs`: {}",
                    names.join(" → ")
                ),
            );
        }
        if cyclic {
            return None;
        }
        // Kahn's algorithm, taking the earliest ready step in file order each time.
        let mut indegree: Vec<usize> = (0..pending.len()).map(|i| pending[i].needs.len()).collect();
        let mut ready: BTreeSet<usize> = (0..pending.len()).filter(|&i| indegree[i] == 0).collect();
        let mut order = Vec::with_capacity(pending.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for j in g.neighbors(i) {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.insert(j);
                }
            }
        }
        Some(order)
    }
}

/// A path around the cycle through `start` within `members`, ending at `start` again.
fn cycle_path(g: &DiGraphMap<usize, ()>, start: usize, members: &BTreeSet<usize>) -> Vec<usize> {
    // Depth-first search for a way back to `start`, staying inside the component.
    let mut stack = vec![(start, vec![start])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        let mut next: Vec<usize> = g.neighbors(node).filter(|n| members.contains(n)).collect();
        next.sort_unstable_by(|a, b| b.cmp(a));
        for n in next {
            if n == start {
                let mut p = path.clone();
                p.push(start);
                return p;
            }
            if seen.insert(n) {
                let mut p = path.clone();
                p.push(n);
                stack.push((n, p));
            }
        }
    }
    vec![start, start]
}

/// `ancestors[i][j]`: step j is upstream of step i.
pub(super) fn ancestors(pending: &[Pending], order: &[usize]) -> Vec<Vec<bool>> {
    let index: HashMap<&str, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.value.as_str(), i))
        .collect();
    let n = pending.len();
    let mut anc = vec![vec![false; n]; n];
    for &i in order {
        for need in &pending[i].needs {
            let j = index[need.value.as_str()];
            anc[i][j] = true;
            let (a, b) = if i < j {
                let (lo, hi) = anc.split_at_mut(j);
                (&mut lo[i], &hi[0])
            } else {
                let (lo, hi) = anc.split_at_mut(i);
                (&mut hi[0], &lo[j])
            };
            for k in 0..n {
                a[k] |= b[k];
            }
        }
    }
    anc
}
