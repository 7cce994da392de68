//! Reachability: the definitions of the output ([`Node`]s, in first-reached order), the work
//! list of those to copy, and the `pin_if` decorations waiting for their condition
//! ([`Reach`] owns them). [`State::need`] is the walk's one step: a reference resolved,
//! an undefined import reported, the result reached. At the end, the pins whose condition was
//! reached and the re-exported names are attached to what they resolve to.

use std::collections::{HashMap, VecDeque};

use irkit_core::{Inst, Module, Opcode, Payload};

use super::context::Context;
use super::index::{DefIndex, InputId, NodeId, SrcDef};
use super::linkage::linkage_of;
use super::resolve::Resolution;
use super::{Key, State};
use crate::error::{Chain, ChainLink, LinkError};

/// A definition of the output: what it stands for, what is copied into it, who reached it.
pub(super) struct Node {
    /// The definition copied: the definition itself, or the first declaration reached.
    pub(super) src: SrcDef,
    /// Its instruction in the output.
    pub(super) out: Inst,
    /// The node whose copy reached it first (`None` for roots).
    pub(super) parent: Option<NodeId>,
    /// It stands for an unresolved import or a C symbol (a declaration of the output).
    pub(super) decl: bool,
}

/// A `pin_if(@d, @c)` decoration of a copied definition, re-attached at the end when `c` was
/// reached.
pub(super) struct PinIf {
    pub(super) owner: NodeId,
    pub(super) module: InputId,
    pub(super) def: DefIndex,
    pub(super) cond: DefIndex,
}

/// What the walk does next ([`Reach::next`]).
pub(super) enum Step {
    /// Reach the target of a `pin_if` of `owner` whose condition was reached.
    Pinned { owner: NodeId, target: SrcDef },
    /// Copy node `n`.
    Copy(NodeId),
}

/// The output's definitions and the walk's work lists. Maps keyed by [`Key`] keep std's
/// DoS-resistant hasher: a hostile file chooses the names in those keys freely.
#[derive(Default)]
pub(super) struct Reach {
    nodes: Vec<Node>,
    node_of: HashMap<Key, NodeId>,
    /// Nodes to copy, in first-reached order.
    queue: VecDeque<NodeId>,
    /// `pin_if` targets whose owner and condition are both reached: (owner, target).
    triggered: VecDeque<(NodeId, SrcDef)>,
    /// `pin_if` targets waiting for their condition (by the condition's key).
    pending: HashMap<Key, Vec<(NodeId, SrcDef)>>,
    pin_ifs: Vec<PinIf>,
}

impl Reach {
    /// The next step of the walk: pins whose condition was reached first, then copies.
    pub(super) fn next(&mut self) -> Option<Step> {
        if let Some((owner, target)) = self.triggered.pop_front() {
            return Some(Step::Pinned { owner, target });
        }
        self.queue.pop_front().map(Step::Copy)
    }

    pub(super) fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.idx()]
    }

    /// How many definitions the output has.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether `key` was reached.
    pub(super) fn contains(&self, key: &Key) -> bool {
        self.node_of.contains_key(key)
    }

    /// Records a `pin_if` of node `pin.owner`: its target is reached now (`now`, its
    /// condition is) or once its condition's key `cond` is; it is re-attached at the end.
    pub(super) fn pin_if(&mut self, pin: PinIf, cond: Key, now: bool) {
        let target = SrcDef::new(pin.module, pin.def);
        if now {
            self.triggered.push_back((pin.owner, target));
        } else {
            self.pending
                .entry(cond)
                .or_default()
                .push((pin.owner, target));
        }
        self.pin_ifs.push(pin);
    }

    /// The output instruction of `key`, created (and queued for copying) on first reach; its
    /// definition is copied from `src`.
    fn reach(
        &mut self,
        cx: &Context<'_>,
        errors: &mut Vec<LinkError>,
        out: &mut Module,
        (key, src): (Key, SrcDef),
        parent: Option<NodeId>,
    ) -> Inst {
        if let Some(&n) = self.node_of.get(&key) {
            return self.nodes[n.idx()].out;
        }
        let opcode = cx
            .view(src.input)
            .def_opcode(src.def.index())
            .unwrap_or(Opcode::FUNC);
        let root = out.root();
        let inst = match out.new_inst(opcode, None, Vec::new(), Payload::None) {
            Ok(i) => i,
            Err(_) => out
                .new_inst(Opcode::FUNC, None, Vec::new(), Payload::None)
                .unwrap_or(root),
        };
        if let Err(e) = out.append_child(root, inst) {
            errors.push(LinkError::Internal(e.to_string()));
        }
        let id = NodeId::new(self.nodes.len() as u32);
        self.nodes.push(Node {
            src,
            out: inst,
            parent,
            decl: !matches!(key, Key::Def(..)),
        });
        if let Some(waiting) = self.pending.remove(&key) {
            self.triggered.extend(waiting);
        }
        self.node_of.insert(key, id);
        self.queue.push_back(id);
        inst
    }

    /// The chain of nodes from `from` up to its root.
    pub(super) fn chain(&self, cx: &Context<'_>, from: Option<NodeId>) -> Chain {
        let mut links = Vec::new();
        let mut cur = from;
        while let Some(n) = cur {
            let Some(node) = self.nodes.get(n.idx()) else {
                break;
            };
            links.push(ChainLink {
                name: cx.display_name(node.src),
                file: cx.file(node.src.input).to_string(),
            });
            // Parents are created before their children: the walk ends.
            cur = node.parent.filter(|&p| p < n);
        }
        Chain(links)
    }

    /// Re-attaches the `pin_if` decorations whose condition was reached.
    pub(super) fn attach_pin_ifs(
        &mut self,
        res: &Resolution<'_>,
        out: &mut Module,
        errors: &mut Vec<LinkError>,
    ) {
        for p in std::mem::take(&mut self.pin_ifs) {
            let (Some(ck), Some(dk)) = (
                res.memo(SrcDef::new(p.module, p.cond)),
                res.memo(SrcDef::new(p.module, p.def)),
            ) else {
                continue;
            };
            let (Some(&c), Some(&d)) = (self.node_of.get(ck), self.node_of.get(dk)) else {
                continue;
            };
            let owner = self.nodes[p.owner.idx()].out;
            let ops = vec![self.nodes[d.idx()].out, self.nodes[c.idx()].out];
            if let Err(e) = out.add_decoration(owner, Opcode::PIN_IF, ops, Payload::None) {
                errors.push(LinkError::Internal(e.to_string()));
            }
        }
    }

    /// Attaches every re-exported name that resolved to a definition or declaration of the
    /// output (`targets`, in name order) to it, as an extra `export` (after its own
    /// decorations), unless `--internalize` drops the name.
    pub(super) fn attach_reexports(
        &self,
        cx: &Context<'_>,
        targets: &[(&str, Key)],
        out: &mut Module,
        errors: &mut Vec<LinkError>,
    ) {
        for (name, key) in targets {
            if cx.opts.internalize && !cx.keep_exports.contains(name) {
                continue;
            }
            let Some(&n) = self.node_of.get(key) else {
                continue;
            };
            let target = self.nodes[n.idx()].out;
            if out
                .decoration_strs(target, Opcode::EXPORT)
                .any(|e| e == *name)
            {
                continue;
            }
            if let Err(e) = out.add_decoration(
                target,
                Opcode::EXPORT,
                Vec::new(),
                Payload::Str((*name).into()),
            ) {
                errors.push(LinkError::Internal(e.to_string()));
            }
        }
    }
}

impl State<'_> {
    /// The output instruction of `key` ([`Reach::reach`]).
    pub(super) fn reach(
        &mut self,
        out: &mut Module,
        key: Key,
        src: SrcDef,
        parent: Option<NodeId>,
    ) -> Inst {
        self.reach
            .reach(&self.cx, &mut self.errors, out, (key, src), parent)
    }

    /// The chain of nodes from `from` up to its root ([`Reach::chain`]).
    pub(super) fn chain(&self, from: Option<NodeId>) -> Chain {
        self.reach.chain(&self.cx, from)
    }

    /// The output instruction for a reference to definition `src` (from its own input),
    /// needed by node `needer`: resolves it, reports an undefined import (executable link),
    /// and reaches the result. With `optional` (a `pin_weak`), an unresolved import gives
    /// `None` silently.
    pub(super) fn need(
        &mut self,
        out: &mut Module,
        src: SrcDef,
        needer: Option<NodeId>,
        optional: bool,
    ) -> Option<Inst> {
        let key = self.resolve_ref(out, src);
        if let Key::Import(name) = &key
            && !self.cx.opts.library
        {
            if optional {
                return None;
            }
            if self.res.first_undefined(name) {
                let chain = self.chain(needer);
                // The name imported, when it is not the one left undefined: re-exports led
                // from one to the other.
                let imported = linkage_of(self.cx.view(src.input), src.def)
                    .ok()
                    .and_then(|l| l.import);
                match imported.filter(|i| **i != **name) {
                    Some(i) => {
                        let via = self.res.reexport_path(&self.cx, &i);
                        self.errors.push(LinkError::UndefinedReexport {
                            name: name.to_string(),
                            via,
                            chain,
                        });
                    }
                    None => self.errors.push(LinkError::Undefined {
                        name: name.to_string(),
                        chain,
                    }),
                }
            }
        }
        let copied = match key {
            Key::Def(w) => w,
            _ => src,
        };
        Some(self.reach(out, key, copied, needer))
    }
}
