//! Hashes from labels ([`Hasher`]): the strongly connected components of the graph of labels
//! (Tarjan, iterative), each numbered in breadth-first order from the node hashed, and the
//! component's stream fed in that order.

use super::*;

/// Per-node state of the Tarjan walk.
pub(super) struct Visit {
    index: u32,
    low: u32,
    on_stack: bool,
}

/// Memoized semantic hashes over one graph.
pub(crate) struct Hasher<G: Graph> {
    pub graph: G,
    feed: Feed,
    done: NodeMap<[u8; 32]>,
    labels: NodeMap<Label>,
}

impl<G: Graph> Hasher<G> {
    pub fn new(graph: G) -> Hasher<G> {
        Hasher {
            graph,
            feed: Feed::new(),
            done: NodeMap::default(),
            labels: NodeMap::default(),
        }
    }

    /// A hasher whose definitions' labels are already known (`labels[i]` is `Def(i)`'s), of a
    /// graph with `pool` pool entries.
    pub fn with_def_labels(graph: G, labels: Vec<Label>, pool: usize) -> Hasher<G> {
        let mut h = Hasher::new(graph);
        h.done = NodeMap::dense(labels.len(), pool);
        h.labels = NodeMap::dense(0, pool);
        h.labels.defs = labels.into_iter().map(Some).collect();
        h
    }

    /// Hashes the definitions `0..defs` that form a component alone with nothing left to
    /// hash behind them, on every core: first (serially, memoized) every pool entry a
    /// definition's slots name, then each definition whose every slot names itself or
    /// something hashed. That is every definition that refers to others only by key (an
    /// exported or imported name), the common case. Their hashes are what [`Hasher::hash`]
    /// gives (the same stream, `component_stream` over the one member); the others are left
    /// to it. Needs the definitions' labels ([`Hasher::with_def_labels`]).
    pub fn hash_lone_defs(&mut self, defs: u32) -> Result<(), G::Error> {
        let mut named = Vec::<bool>::new();
        let mut pool: Vec<Node> = Vec::new();
        for d in 0..defs {
            for &w in self.labels.get(&Node::Def(d)).map_or(&[][..], |l| &l.succ) {
                if let Node::Pool(p) = w {
                    let p = p as usize;
                    if p >= named.len() {
                        named.resize(p + 1, false);
                    }
                    if !std::mem::replace(&mut named[p], true) {
                        pool.push(w);
                    }
                }
            }
        }
        for p in pool {
            self.hash(p)?;
        }
        let (labels, done) = (&self.labels, &self.done);
        let domain = self.graph.scheme().domains().node;
        let lone: Vec<u32> = (0..defs)
            .into_par_iter()
            .filter(|&d| {
                let me = Node::Def(d);
                !done.contains_key(&me)
                    && labels
                        .get(&me)
                        .is_some_and(|l| l.succ.iter().all(|w| *w == me || done.contains_key(w)))
            })
            .collect();
        let hashes: Vec<[u8; 32]> = lone
            .par_iter()
            .map_init(Feed::new, |feed, &d| {
                component_stream(feed, labels, done, &[Node::Def(d)], domain)
            })
            .collect();
        self.done
            .extend(lone.into_iter().map(Node::Def).zip(hashes));
        Ok(())
    }

    fn label(&mut self, n: Node) -> Result<&Label, G::Error> {
        let graph = &mut self.graph;
        self.labels.get_or_try_insert(n, || graph.label(n))
    }

    /// The semantic hash of `root` (and, as a by-product, of everything it reaches).
    pub fn hash(&mut self, root: Node) -> Result<[u8; 32], G::Error> {
        if let Some(h) = self.done.get(&root) {
            return Ok(*h);
        }
        let mut visits: HashMap<Node, Visit> = HashMap::default();
        let mut stack: Vec<Node> = Vec::new();
        // The walk: (node, next successor to look at).
        let mut walk: Vec<(Node, usize)> = Vec::new();
        let mut counter = 0u32;
        let mut enter = |n: Node, visits: &mut HashMap<Node, Visit>, stack: &mut Vec<Node>| {
            visits.insert(
                n,
                Visit {
                    index: counter,
                    low: counter,
                    on_stack: true,
                },
            );
            counter += 1;
            stack.push(n);
        };
        enter(root, &mut visits, &mut stack);
        walk.push((root, 0));
        while let Some(&(v, next)) = walk.last() {
            let succ = self.label(v)?.succ.get(next).copied();
            if let Some(w) = succ {
                if let Some(top) = walk.last_mut() {
                    top.1 += 1;
                }
                if self.done.contains_key(&w) {
                    continue;
                }
                match visits.get(&w) {
                    None => {
                        enter(w, &mut visits, &mut stack);
                        walk.push((w, 0));
                    }
                    Some(vw) if vw.on_stack => {
                        let wi = vw.index;
                        if let Some(vv) = visits.get_mut(&v) {
                            vv.low = vv.low.min(wi);
                        }
                    }
                    Some(_) => {}
                }
                continue;
            }
            walk.pop();
            let (vi, vl) = visits.get(&v).map_or((0, 0), |x| (x.index, x.low));
            if let Some(&(parent, _)) = walk.last()
                && let Some(p) = visits.get_mut(&parent)
            {
                p.low = p.low.min(vl);
            }
            if vi == vl {
                let at = stack.iter().rposition(|&n| n == v).unwrap_or(0);
                let members: Vec<Node> = stack.drain(at..).collect();
                for m in &members {
                    if let Some(x) = visits.get_mut(m) {
                        x.on_stack = false;
                    }
                }
                self.finish_component(&members);
            }
        }
        Ok(self.done.get(&root).copied().unwrap_or([0; 32]))
    }

    /// Hashes every member of a finished component (all its successors outside it are done).
    fn finish_component(&mut self, members: &[Node]) {
        let scheme = self.graph.scheme();
        let Hasher {
            feed, done, labels, ..
        } = self;
        if let [only] = members {
            let h = component_stream(feed, labels, done, &[*only], scheme.domains().node);
            done.insert(*only, h);
            return;
        }
        let slots: u64 = members
            .iter()
            .map(|m| labels.get(m).map_or(0, |l| l.succ.len() as u64))
            .sum();
        let n = members.len() as u64;
        if n.saturating_mul(n.saturating_add(slots)) <= SCC_BUDGET {
            let mut hashes = Vec::with_capacity(members.len());
            for &m in members {
                let order = bfs_order(labels, m, members);
                hashes.push(component_stream(
                    feed,
                    labels,
                    done,
                    &order,
                    scheme.domains().node,
                ));
            }
            done.extend(members.iter().copied().zip(hashes));
        } else {
            let mut order = members.to_vec();
            order.sort_unstable();
            let whole = component_stream(feed, labels, done, &order, scheme.domains().scc);
            for (rank, &m) in order.iter().enumerate() {
                feed.update(scheme.domains().scc_member);
                feed.update(&whole);
                feed.update(&(rank as u32).to_le_bytes());
                done.insert(m, feed.finish());
            }
        }
    }
}

/// The members of `members` reachable from `start` inside the component, breadth-first,
/// following slots in order.
pub(super) fn bfs_order(labels: &NodeMap<Label>, start: Node, members: &[Node]) -> Vec<Node> {
    let inside: HashSet<Node> = members.iter().copied().collect();
    let mut order = vec![start];
    let mut seen: HashSet<Node> = [start].into_iter().collect();
    let mut k = 0;
    while let Some(&v) = order.get(k) {
        k += 1;
        if let Some(l) = labels.get(&v) {
            for &w in &l.succ {
                if inside.contains(&w) && seen.insert(w) {
                    order.push(w);
                }
            }
        }
    }
    order
}

/// blake3(domain, u32 count, per node in `order`: label hash, u32 slot count, per slot `00` +
/// u32 position in `order` or `01` + the target's hash).
pub(super) fn component_stream(
    h: &mut Feed,
    labels: &NodeMap<Label>,
    done: &NodeMap<[u8; 32]>,
    order: &[Node],
    domain: &[u8],
) -> [u8; 32] {
    let pos: HashMap<Node, u32> = if order.len() > 1 {
        order
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u32))
            .collect()
    } else {
        HashMap::default()
    };
    let position = |w: &Node| match order {
        [only] => (only == w).then_some(0),
        _ => pos.get(w).copied(),
    };
    h.update(domain);
    h.update(&(order.len() as u32).to_le_bytes());
    for n in order {
        let Some(l) = labels.get(n) else {
            continue;
        };
        h.update(&l.hash);
        h.update(&(l.succ.len() as u32).to_le_bytes());
        for w in &l.succ {
            if let Some(p) = position(w) {
                h.update(&[0]);
                h.update(&p.to_le_bytes());
            } else {
                h.update(&[1]);
                h.update(done.get(w).unwrap_or(&[0; 32]));
            }
        }
    }
    h.finish()
}
