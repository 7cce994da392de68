//! The graph of a file's (or a writer's) flattened definitions and pool ([`FlatGraph`]): the
//! nodes, their labels and successors, labelled on every core.

use super::*;

/// The reference graph of a module being written: its flattened bodies and pool.
pub(crate) struct FlatGraph<'a, S: Strings + ?Sized, B: MaybeCompact, P: Flat + ?Sized> {
    strings: &'a S,
    bodies: Vec<&'a B>,
    pool: &'a P,
    keys: Vec<Option<DefKey>>,
    feed: Feed,
    scheme: Scheme,
}

impl<'a, S, B, P> FlatGraph<'a, S, B, P>
where
    S: Strings + Sync + ?Sized,
    B: MaybeCompact + Sync,
    P: Flat + Sync + ?Sized,
{
    /// The graph of `bodies` and `pool`, labelled for `scheme` (each definition's key read
    /// on every core).
    pub fn new(strings: &'a S, bodies: Vec<&'a B>, pool: &'a P, scheme: Scheme) -> Self {
        let keys = bodies.par_iter().map(|b| def_key(*b, strings)).collect();
        FlatGraph {
            strings,
            bodies,
            pool,
            keys,
            feed: Feed::new(),
            scheme,
        }
    }

    /// Every definition's label, in definition order, computed on every core (a label is a
    /// function of its own body alone).
    pub fn def_labels(&self) -> Vec<Label> {
        let labeler = Labeler {
            strings: self.strings,
            scheme: self.scheme,
        };
        let keys = &self.keys;
        // A group of bodies at a time: their streams are hashed together (`Feed::capturing`).
        self.bodies
            .par_chunks(crate::batch::LANES)
            .flat_map_iter(|group| {
                let mut feed = Feed::capturing();
                let mut labels: Vec<Label> = group
                    .iter()
                    .map(|b| {
                        let key = |j: u32, h: &mut Feed| {
                            Ok::<_, std::convert::Infallible>(feed_known_key(keys, j, h))
                        };
                        match labeler.body(&mut feed, *b, key) {
                            Ok(l) => l,
                            Err(never) => match never {},
                        }
                    })
                    .collect();
                for (l, h) in labels.iter_mut().zip(feed.captured_digests()) {
                    l.hash = h;
                }
                labels
            })
            .collect()
    }
}

impl<S: Strings + ?Sized, B: MaybeCompact, P: Flat + ?Sized> Graph for FlatGraph<'_, S, B, P> {
    type Error = std::convert::Infallible;

    fn scheme(&self) -> Scheme {
        self.scheme
    }

    fn label(&mut self, node: Node) -> Result<Label, Self::Error> {
        let labeler = Labeler {
            strings: self.strings,
            scheme: self.scheme,
        };
        let keys = &self.keys;
        let key = |j: u32, h: &mut Feed| Ok(feed_known_key(keys, j, h));
        match node {
            Node::Def(i) => match self.bodies.get(i as usize) {
                Some(b) => labeler.body(&mut self.feed, *b, key),
                None => Ok(Label {
                    hash: [0; 32],
                    succ: Vec::new(),
                }),
            },
            Node::Pool(i) => labeler.pool_entry(&mut self.feed, self.pool, i as usize, key),
        }
    }
}
