//! Tree shape: the module holds definitions, a function holds blocks (or is an imported or
//! extern declaration), a block holds its parameters, then instructions, then exactly one
//! terminator; the entry block's parameters are the function's; globals and their
//! initializers.

use crate::{Inst, Opcode};

use super::{Cx, Kind, VTy, plural};

impl Cx<'_> {
    /// The children of the tree instruction `p` that the walk reached, with their positions.
    pub(super) fn tree_children(&self, p: Inst) -> Vec<Inst> {
        self.live(p).map_or_else(Vec::new, |d| {
            d.children()
                .iter()
                .copied()
                .filter(|&c| {
                    self.in_tree.get(c.idx()).copied().unwrap_or(false)
                        && self.tparent[c.idx()] == Some(p)
                })
                .collect()
        })
    }

    /// Whether the decoration `op` is on `d`.
    fn has_decoration(&self, d: Inst, op: Opcode) -> bool {
        self.live(d)
            .is_some_and(|dd| dd.decorations().iter().any(|&x| self.opc(x) == Some(op)))
    }

    /// The module's children are top-level definitions.
    pub(super) fn check_module_children(&mut self, root: Inst) {
        for c in self.tree_children(root) {
            let Some(op) = self.opc(c) else { continue };
            if op.is_known() && !op.is_definition() {
                let msg = format!(
                    "`{op}` cannot appear at module level: the module's children are definitions (func, proc, global_var, global_const, generic, interface, interface_req, witness_table, class, trait, object)"
                );
                self.err(c, msg);
            }
        }
    }

    /// A function: fn type, blocks only, a body unless imported or extern, entry parameters.
    pub(super) fn check_func(&mut self, f: Inst) {
        let Some(d) = self.live(f) else { return };
        if !self.at_def_level(f) {
            self.err(f, "`func` must be a child of the module or of a `generic`");
        }
        let sig = match d.ty {
            Some(t) => match self.kind(t) {
                Kind::Fn => Some(t),
                Kind::Bad => None,
                _ => {
                    let msg = format!(
                        "the type of a `func` must be a fn type, found {}",
                        self.ty_str(t)
                    );
                    self.err(f, msg);
                    None
                }
            },
            None => None,
        };
        let children = self.tree_children(f);
        let mut blocks = 0usize;
        for &c in &children {
            match self.opc(c) {
                Some(Opcode::BLOCK) => blocks += 1,
                Some(op) if op.is_known() => {
                    let msg = format!(
                        "`{op}` cannot be a child of a function: a function's children are blocks"
                    );
                    self.err(c, msg);
                }
                _ => {}
            }
        }
        let imported = self.is_imported(f);
        let external = self.has_decoration(f, Opcode::EXTERN);
        if blocks == 0 && !imported && !external {
            // A front end that made one function twice (a declaration, then the definition)
            // is told so: the other function of the same name is the likely intended one.
            let twin = self.name_of(f).filter(|&n| {
                self.m.top_level().iter().any(|&g| {
                    g != f && self.opc(g) == Some(Opcode::FUNC) && self.name_of(g) == Some(n)
                })
            });
            let msg = match twin {
                Some(n) => format!(
                    "function has no body, and another function is also named @{n}: was one function made twice? (a declaration must carry `import` or `extern`)"
                ),
                None => {
                    "function has no body: a declaration must carry `import` or `extern`".to_owned()
                }
            };
            self.err(f, msg);
        }
        if blocks > 0 && imported {
            self.err(
                f,
                "an imported function has no body, but this one has blocks",
            );
        }
        // The entry block's parameters are the function's parameters.
        let (Some(sig), Some(entry)) = (sig, self.entry_of(f)) else {
            return;
        };
        let params: Vec<Inst> = self
            .live(sig)
            .map(|d| d.operands.get(1..).unwrap_or(&[]).to_vec())
            .unwrap_or_default();
        let bparams = self.params_of(entry);
        if bparams.len() != params.len() {
            let msg = format!(
                "the entry block takes {}, the function type has {}",
                plural(bparams.len(), "parameter"),
                params.len()
            );
            self.err(entry, msg);
            return;
        }
        for (k, (&bp, &fp)) in bparams.iter().zip(&params).enumerate() {
            let got = self
                .live(bp)
                .and_then(|d| d.ty)
                .and_then(|t| self.as_value_type(t));
            let want = self.as_value_type(fp);
            if let (Some(got), Some(want)) = (got, want)
                && got != want
            {
                let msg = format!(
                    "entry parameter {k} has type {}, expected {}",
                    self.vty_str(got),
                    self.vty_str(want)
                );
                self.err(bp, msg);
            }
        }
    }

    /// A block: in a function; parameters, then instructions; one terminator, last.
    pub(super) fn check_block(&mut self, b: Inst) {
        let parent = self.tparent.get(b.idx()).copied().flatten();
        if parent.and_then(|p| self.opc(p)) != Some(Opcode::FUNC) {
            self.err(b, "a `block` must be a child of a `func`");
        }
        let children = self.tree_children(b);
        let mut seen_inst = false;
        for (k, &c) in children.iter().enumerate() {
            let Some(op) = self.opc(c) else { continue };
            let is_last = k + 1 == children.len();
            if op == Opcode::PARAM {
                if seen_inst {
                    self.err(
                        c,
                        "`param` after the first instruction of the block: parameters come first",
                    );
                }
                continue;
            }
            seen_inst = true;
            if !op.is_known() {
                continue;
            }
            if op == Opcode::BLOCK || op.is_definition() || op == Opcode::MODULE {
                self.err(c, format!("`{op}` cannot appear inside a block"));
                continue;
            }
            if op.is_terminator() && !is_last {
                self.err(
                    c,
                    format!("terminator `{op}` is not the last instruction of its block"),
                );
            }
        }
        let ends = children
            .last()
            .and_then(|&c| self.opc(c))
            .is_some_and(|op| op.is_terminator() || !op.is_known());
        if !seen_inst || !ends {
            self.err(b, "block has no terminator");
        }
    }

    /// A global: value type, initializer present as the rules require and of that type.
    pub(super) fn check_global(&mut self, g: Inst) {
        let Some(d) = self.live(g) else { return };
        let op = d.opcode;
        if self.tparent.get(g.idx()).copied().flatten() != Some(self.m.root()) {
            self.err(g, format!("`{op}` must be a child of the module"));
        }
        let ty = match d.ty {
            Some(t) => match self.kind(t) {
                Kind::Value => Some(VTy(Some(t))),
                Kind::Bad => None,
                _ => {
                    let msg = format!(
                        "the type of a `{op}` must be a value type, found {}",
                        self.ty_str(t)
                    );
                    self.err(g, msg);
                    None
                }
            },
            None => None,
        };
        let imported = self.has_decoration(g, Opcode::IMPORT);
        match d.operands.first() {
            None => {
                if op == Opcode::GLOBAL_CONST && !imported {
                    self.err(
                        g,
                        "`global_const` needs an initializer unless it is imported",
                    );
                }
            }
            Some(&init) => {
                if imported {
                    self.err(
                        g,
                        format!("an imported `{op}` has no initializer, but this one has one"),
                    );
                    return;
                }
                let Some(id) = self.live(init) else { return };
                if id.opcode.is_definition() {
                    if let Some(t) = ty
                        && !self.is_ptr(t)
                    {
                        let msg = format!(
                            "the initializer {} is an address (ptr), expected {}",
                            self.vname(init),
                            self.vty_str(t)
                        );
                        self.err(g, msg);
                    }
                } else if id.opcode.is_constant() {
                    let it = id.ty.and_then(|t| self.as_value_type(t));
                    if let (Some(it), Some(t)) = (it, ty)
                        && it != t
                    {
                        let msg = format!(
                            "the initializer has type {}, expected {}",
                            self.vty_str(it),
                            self.vty_str(t)
                        );
                        self.err(g, msg);
                    }
                } else {
                    let msg = format!(
                        "the initializer must be a constant or a definition, found {} ({})",
                        self.vname(init),
                        self.opname(init)
                    );
                    self.err(g, msg);
                }
            }
        }
    }
}
