//! The module generator proper: one [`Gen`] builds one module, choice by choice, keeping the
//! typing and dominance facts it needs to produce only what the verifier accepts.

use std::collections::HashSet;

use irkit_core::{FloatBinary, FloatUnary, Inst, IntBinary, IntUnary, Module, Opcode, Payload};

use crate::ty::{INTS, SCALARS, Ty, TyCache};
use crate::{Config, Entropy};

mod bodies;
mod generics;
mod procs;

/// Integer condition codes (Ark numbering).
const INT_CCS: [u64; 10] = [1, 2, 3, 4, 5, 6, 10, 11, 12, 13];
/// `slt`.
const CC_SLT: u64 = 12;

const INT_BINOPS: &[IntBinary] = IntBinary::ALL;

const FLOAT_BINOPS: &[FloatBinary] = FloatBinary::ALL;

/// The unary operations (bit counts; float sign, root and rounding operations).
const INT_UNOPS: &[IntUnary] = IntUnary::ALL;

const FLOAT_UNOPS: &[FloatUnary] = FloatUnary::ALL;

/// Local name hints: identifiers and names the printer has to quote.
const LOCAL_NAMES: [&str; 6] = ["v", "tmp.", "x y", "é", "q\"", "7"];

/// A function signature, independent of any module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sig {
    pub(crate) ret: Option<Ty>,
    pub(crate) params: Vec<Ty>,
}

/// Something one module of a set exports, described independently of the module, so that
/// another module can import it with a structurally equal type.
#[derive(Clone, Debug)]
pub(crate) enum Iface {
    Func {
        name: String,
        sig: Sig,
    },
    Global {
        name: String,
        ty: Ty,
        constant: bool,
    },
}

struct Func {
    inst: Inst,
    sig: Sig,
    body: bool,
}

struct Global {
    inst: Inst,
    ty: Ty,
    writable: bool,
    /// For a `global_const ptr` initialized with a function's address: that function.
    fn_target: Option<usize>,
    /// For a `global_const [N x ptr]` of function addresses of one signature: the functions.
    fn_table: Vec<usize>,
}

/// What is available at a point of a function body: values (with their types) and pointers
/// whose pointee type is known (stack slots, globals, addresses derived from them).
#[derive(Clone, Default)]
struct Scope {
    vals: Vec<(Inst, Ty)>,
    /// (pointer, pointee type, writable).
    mems: Vec<(Inst, Ty, bool)>,
}

/// Builds one module.
pub(crate) struct Gen<'g, 'e> {
    e: &'g mut Entropy<'e>,
    cfg: &'g Config,
    m: Module,
    tys: TyCache,
    aggs: Vec<Ty>,
    funcs: Vec<Func>,
    globals: Vec<Global>,
    prefix: String,
    counter: usize,
    export_names: HashSet<String>,
    /// What this module exports (for importers in a set), `hook`/`shared` excluded.
    pub(crate) exports: Vec<Iface>,
    cur_func: usize,
    blocks_left: usize,
}

impl<'g, 'e> Gen<'g, 'e> {
    pub(crate) fn new(e: &'g mut Entropy<'e>, cfg: &'g Config, prefix: &str) -> Gen<'g, 'e> {
        Gen {
            e,
            cfg,
            m: Module::new(),
            tys: TyCache::default(),
            aggs: Vec::new(),
            funcs: Vec::new(),
            globals: Vec::new(),
            prefix: prefix.to_string(),
            counter: 0,
            export_names: HashSet::new(),
            exports: Vec::new(),
            cur_func: 0,
            blocks_left: 0,
        }
    }

    /// A yes/no choice, `true` with probability about `percent`/100.
    pub(crate) fn coin(&mut self, percent: usize) -> bool {
        self.e.chance(percent)
    }

    pub(crate) fn finish(self) -> Module {
        self.m
    }

    fn fresh(&mut self, base: &str) -> String {
        self.counter += 1;
        format!("{}{}{}", self.prefix, base, self.counter)
    }

    fn ty(&mut self, t: &Ty) -> Inst {
        self.tys.get(&mut self.m, t)
    }

    fn fn_ty(&mut self, sig: &Sig) -> Inst {
        let ret = match &sig.ret {
            Some(t) => self.ty(t),
            None => self.m.ty_void(),
        };
        let params: Vec<Inst> = sig.params.iter().map(|p| self.ty(p)).collect();
        self.m.ty_fn(ret, &params).expect("fn types intern")
    }

    // ---- types ---------------------------------------------------------------------------

    /// Aggregate types: each built from scalars and earlier aggregates, so nesting is finite.
    pub(crate) fn gen_types(&mut self) {
        let n = self.e.range(0, self.cfg.max_aggregate_types);
        for _ in 0..n {
            let t = match self.e.below(3) {
                0 => {
                    let elem = self.field_ty();
                    Ty::Array(Box::new(elem), self.e.range(0, 4) as u64)
                }
                1 => {
                    let k = self.e.range(0, 3);
                    Ty::Struct((0..k).map(|_| self.field_ty()).collect())
                }
                _ => {
                    let k = self.e.range(1, 3);
                    let fields = (0..k).map(|_| self.field_ty()).collect();
                    let name = self.fresh("S");
                    Ty::Named(name, fields)
                }
            };
            self.aggs.push(t);
        }
    }

    fn field_ty(&mut self) -> Ty {
        if !self.aggs.is_empty() && self.e.chance(25) {
            let i = self.e.below(self.aggs.len());
            self.aggs[i].clone()
        } else {
            SCALARS[self.e.below(SCALARS.len())].clone()
        }
    }

    fn value_ty(&mut self) -> Ty {
        if !self.aggs.is_empty() && self.e.chance(30) {
            let i = self.e.below(self.aggs.len());
            self.aggs[i].clone()
        } else {
            SCALARS[self.e.below(SCALARS.len())].clone()
        }
    }

    fn int_ty(&mut self) -> Ty {
        INTS[self.e.below(INTS.len())].clone()
    }

    fn float_ty(&mut self) -> Ty {
        if self.e.chance(50) { Ty::F64 } else { Ty::F32 }
    }

    fn sig(&mut self) -> Sig {
        let ret = if self.e.chance(75) {
            Some(self.value_ty())
        } else {
            None
        };
        let n = self.e.range(0, self.cfg.max_params);
        let params = (0..n).map(|_| self.value_ty()).collect();
        Sig { ret, params }
    }

    // ---- constants -----------------------------------------------------------------------

    fn def_addresses(&self) -> Vec<Inst> {
        self.funcs
            .iter()
            .map(|f| f.inst)
            .chain(self.globals.iter().map(|g| g.inst))
            .collect()
    }

    /// A constant of type `t`; with `defs`, a `ptr` may be a definition's address.
    fn constant(&mut self, t: &Ty, defs: bool) -> Inst {
        let ti = self.ty(t);
        if self.e.chance(8) {
            return self.m.const_zero(ti).expect("zero constants intern");
        }
        match t {
            Ty::I1 | Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 => {
                let w = t.int_width().unwrap_or(64);
                let v = match self.e.below(4) {
                    0 => self.e.below(4) as u64,
                    1 => u64::MAX,
                    2 => 1u64 << (w - 1),
                    _ => self.e.u64(),
                };
                self.m.const_int(ti, v).expect("int constants intern")
            }
            Ty::F32 | Ty::F64 => {
                let v: f64 = match self.e.below(6) {
                    0 => self.e.below(16) as f64 * 0.5,
                    1 => f64::NAN,
                    2 => f64::INFINITY,
                    3 => -0.0,
                    4 => -(self.e.below(1000) as f64) / 7.0,
                    _ => f64::from_bits(self.e.u64()),
                };
                let bits = if *t == Ty::F32 {
                    if self.e.chance(20) {
                        u64::from(self.e.u64() as u32)
                    } else {
                        u64::from((v as f32).to_bits())
                    }
                } else {
                    v.to_bits()
                };
                self.m
                    .const_float_bits(ti, bits)
                    .expect("float constants intern")
            }
            Ty::Ptr => {
                let addrs = if defs {
                    self.def_addresses()
                } else {
                    Vec::new()
                };
                if !addrs.is_empty() && self.e.chance(40) {
                    addrs[self.e.below(addrs.len())]
                } else {
                    self.m.const_null()
                }
            }
            Ty::Array(elem, len) if **elem == Ty::I8 && self.e.chance(40) => {
                let bytes: Vec<u8> = (0..*len).map(|_| self.e.byte()).collect();
                self.m.const_bytes(&bytes)
            }
            Ty::Array(..) | Ty::Struct(_) | Ty::Named(..) => {
                let fields = t.fields().unwrap_or_default();
                let elems: Vec<Inst> = fields.iter().map(|f| self.constant(f, defs)).collect();
                self.m
                    .const_aggregate(ti, &elems)
                    .expect("aggregate constants intern")
            }
        }
    }

    // ---- definitions ---------------------------------------------------------------------

    fn top_level(&mut self, op: Opcode, ty: Inst, ops: Vec<Inst>, name: &str) -> Inst {
        let d = self
            .m
            .new_inst(op, Some(ty), ops, Payload::None)
            .expect("definitions are created");
        let root = self.m.root();
        self.m.append_child(root, d).expect("definitions attach");
        self.m.set_name(d, name).expect("definitions take names");
        d
    }

    fn decorate(&mut self, owner: Inst, op: Opcode, ops: Vec<Inst>, payload: Payload) {
        self.m
            .add_decoration(owner, op, ops, payload)
            .expect("decorations attach");
    }

    fn str_deco(&mut self, owner: Inst, op: Opcode, s: &str) {
        self.decorate(owner, op, Vec::new(), Payload::Str(s.into()));
    }

    fn loc(&mut self, owner: Inst) {
        let line = self.e.range(1, 5000) as i32;
        let col = self.e.range(1, 120) as i32;
        let l = self.m.const_i32(line);
        let c = self.m.const_i32(col);
        let file = if self.e.chance(50) {
            "gen.src"
        } else {
            "dir/a b.c"
        };
        self.decorate(owner, Opcode::LOC, vec![l, c], Payload::Str(file.into()));
    }

    fn export(&mut self, d: Inst, name: &str) {
        self.export_names.insert(name.to_string());
        self.str_deco(d, Opcode::EXPORT, name);
    }

    fn func_decl(&mut self, sig: Sig, name: &str) -> usize {
        let t = self.fn_ty(&sig);
        let inst = self.top_level(Opcode::FUNC, t, Vec::new(), name);
        self.funcs.push(Func {
            inst,
            sig,
            body: false,
        });
        self.funcs.len() - 1
    }

    /// Declares an import of something another module exports.
    pub(crate) fn declare_import(&mut self, iface: &Iface) {
        let local = self.fresh("imp");
        match iface {
            Iface::Func { name, sig } => {
                let f = self.func_decl(sig.clone(), &local);
                let inst = self.funcs[f].inst;
                self.str_deco(inst, Opcode::IMPORT, name);
            }
            Iface::Global { name, ty, constant } => {
                let op = if *constant {
                    Opcode::GLOBAL_CONST
                } else {
                    Opcode::GLOBAL_VAR
                };
                let t = self.ty(ty);
                let inst = self.top_level(op, t, Vec::new(), &local);
                self.str_deco(inst, Opcode::IMPORT, name);
                self.globals.push(Global {
                    inst,
                    ty: ty.clone(),
                    writable: !constant,
                    fn_target: None,
                    fn_table: Vec::new(),
                });
            }
        }
    }

    /// Imports nobody provides (fine in one module and in a library link) and C externs.
    pub(crate) fn gen_dangling_decls(&mut self) {
        for _ in 0..self.e.range(0, 2) {
            let name = self.fresh("ext_import");
            let iface = if self.e.chance(60) {
                let sig = self.sig();
                Iface::Func { name, sig }
            } else {
                let ty = self.value_ty();
                let constant = self.e.chance(50);
                Iface::Global { name, ty, constant }
            };
            self.declare_import(&iface);
        }
        for _ in 0..self.e.range(0, 1) {
            let sig = self.sig();
            let local = self.fresh("c_fn");
            let f = self.func_decl(sig, &local);
            let inst = self.funcs[f].inst;
            let sym = self.fresh("c_sym_");
            self.str_deco(inst, Opcode::EXTERN, &sym);
        }
    }

    /// `shared`: an exported `linkonce` helper whose content is the same in every module.
    pub(crate) fn add_shared(&mut self) {
        let sig = Sig {
            ret: Some(Ty::I32),
            params: vec![Ty::I32],
        };
        let t = self.fn_ty(&sig);
        let f = self.top_level(Opcode::FUNC, t, Vec::new(), "shared");
        self.str_deco(f, Opcode::EXPORT, "shared");
        self.decorate(f, Opcode::LINKONCE, Vec::new(), Payload::None);
        let i32t = self.ty(&Ty::I32);
        let (entry, params) = self.raw_block(f, &[i32t]);
        let three = self.m.const_i32(3);
        let r = self.emit_raw(entry, Opcode::IMUL, Some(i32t), vec![params[0], three]);
        self.emit_raw(entry, Opcode::RET, None, vec![r]);
        self.funcs.push(Func {
            inst: f,
            sig,
            body: true,
        });
    }

    /// `hook`: exported by every module of a set, `weak` except in at most one.
    pub(crate) fn add_hook(&mut self, strong: bool) {
        let sig = Sig {
            ret: None,
            params: Vec::new(),
        };
        let t = self.fn_ty(&sig);
        let f = self.top_level(Opcode::FUNC, t, Vec::new(), "hook");
        self.str_deco(f, Opcode::EXPORT, "hook");
        if !strong {
            self.decorate(f, Opcode::WEAK, Vec::new(), Payload::None);
        }
        let (entry, _) = self.raw_block(f, &[]);
        self.emit_raw(entry, Opcode::RET, None, Vec::new());
        self.funcs.push(Func {
            inst: f,
            sig,
            body: true,
        });
    }

    /// Functions (with bodies), globals and their decorations.
    pub(crate) fn gen_defs(&mut self) {
        let first_new = self.funcs.len();
        let nf = self.e.range(1, self.cfg.max_functions.max(1));
        for _ in 0..nf {
            let sig = self.sig();
            let name = self.fresh("f");
            let f = self.func_decl(sig, &name);
            self.funcs[f].body = true;
        }
        let first_global = self.globals.len();
        for _ in 0..self.e.range(0, self.cfg.max_globals) {
            let ty = self.value_ty();
            let constant = self.e.chance(40);
            let init = if constant || self.e.chance(70) {
                Some(self.constant(&ty, true))
            } else {
                None
            };
            let op = if constant {
                Opcode::GLOBAL_CONST
            } else {
                Opcode::GLOBAL_VAR
            };
            let t = self.ty(&ty);
            let name = self.fresh("g");
            let inst = self.top_level(op, t, init.into_iter().collect(), &name);
            self.globals.push(Global {
                inst,
                ty,
                writable: !constant,
                fn_target: None,
                fn_table: Vec::new(),
            });
        }
        // Function tables: constant pointers to functions, loaded and called indirectly.
        for _ in 0..self.e.range(0, 2) {
            let target = self.e.below(self.funcs.len());
            let ptr = self.ty(&Ty::Ptr);
            let name = self.fresh("fp");
            let init = self.funcs[target].inst;
            let inst = self.top_level(Opcode::GLOBAL_CONST, ptr, vec![init], &name);
            self.globals.push(Global {
                inst,
                ty: Ty::Ptr,
                writable: false,
                fn_target: Some(target),
                fn_table: Vec::new(),
            });
        }
        // Arrays of function addresses of one signature (often one function several times),
        // indexed by a value and called indirectly.
        for _ in 0..self.e.range(0, 2) {
            let first = self.e.below(self.funcs.len());
            let sig = self.funcs[first].sig.clone();
            let same: Vec<usize> = (0..self.funcs.len())
                .filter(|&f| self.funcs[f].sig == sig)
                .collect();
            let n = self.e.range(1, 4);
            let entries: Vec<usize> = (0..n)
                .map(|_| {
                    if self.e.chance(50) {
                        first
                    } else {
                        *self.e.pick(&same).unwrap_or(&first)
                    }
                })
                .collect();
            let ty = Ty::Array(Box::new(Ty::Ptr), n as u64);
            let t = self.ty(&ty);
            let elems: Vec<Inst> = entries.iter().map(|&f| self.funcs[f].inst).collect();
            let init = self
                .m
                .const_aggregate(t, &elems)
                .expect("an array of function addresses interns");
            let name = self.fresh("fns");
            let inst = self.top_level(Opcode::GLOBAL_CONST, t, vec![init], &name);
            self.globals.push(Global {
                inst,
                ty,
                writable: false,
                fn_target: None,
                fn_table: entries,
            });
        }
        for f in first_new..self.funcs.len() {
            self.gen_body(f, &[]);
        }
        for f in first_new..self.funcs.len() {
            let inst = self.funcs[f].inst;
            if let Some(name) = self.decorate_def(inst, true) {
                let sig = self.funcs[f].sig.clone();
                self.exports.push(Iface::Func { name, sig });
            }
        }
        for g in first_global..self.globals.len() {
            let inst = self.globals[g].inst;
            if let Some(name) = self.decorate_def(inst, false) {
                let ty = self.globals[g].ty.clone();
                let constant = !self.globals[g].writable;
                self.exports.push(Iface::Global { name, ty, constant });
            }
        }
        if self.e.chance(20) {
            self.add_stub();
        }
    }

    /// A `stub` placeholder that nothing references, pins or exports (a reached stub fails
    /// a link without `--link-stubs`): it is kept out of `funcs`, so no choice can name it.
    fn add_stub(&mut self) {
        let sig = Sig {
            ret: Some(Ty::I32),
            params: Vec::new(),
        };
        let t = self.fn_ty(&sig);
        let name = self.fresh("stub");
        let f = self.top_level(Opcode::FUNC, t, Vec::new(), &name);
        self.decorate(f, Opcode::STUB, Vec::new(), Payload::None);
        let (entry, _) = self.raw_block(f, &[]);
        self.emit_raw(entry, Opcode::TRAP, None, Vec::new());
    }

    /// Definition-level decorations; returns the export name if it exported `d`.
    fn decorate_def(&mut self, d: Inst, is_func: bool) -> Option<String> {
        let exported = if self.e.chance(45) {
            let name = self.fresh("e");
            self.export(d, &name);
            Some(name)
        } else {
            None
        };
        if exported.is_some() {
            match self.e.below(8) {
                0 => self.decorate(d, Opcode::WEAK, Vec::new(), Payload::None),
                1 => self.decorate(d, Opcode::LINKONCE, Vec::new(), Payload::None),
                _ => {}
            }
        }
        if is_func {
            let hint = match self.e.below(8) {
                0 => Some(Opcode::INLINE_HINT),
                1 => Some(Opcode::INLINE_ALWAYS),
                2 => Some(Opcode::INLINE_NEVER),
                _ => None,
            };
            if let Some(op) = hint {
                self.decorate(d, op, Vec::new(), Payload::None);
            }
            if self.e.chance(15) {
                self.decorate(d, Opcode::PURE, Vec::new(), Payload::None);
            }
        }
        let defs = self.def_addresses();
        if self.e.chance(15) {
            let t = defs[self.e.below(defs.len())];
            self.decorate(d, Opcode::PIN, vec![t], Payload::None);
        }
        if self.e.chance(10) {
            let t = defs[self.e.below(defs.len())];
            self.decorate(d, Opcode::PIN_WEAK, vec![t], Payload::None);
        }
        if self.e.chance(10) {
            let t = defs[self.e.below(defs.len())];
            let c = defs[self.e.below(defs.len())];
            self.decorate(d, Opcode::PIN_IF, vec![t, c], Payload::None);
        }
        if self.e.chance(20) {
            self.loc(d);
        }
        exported
    }

    /// `main: fn() -> i32`, exported, the last function (so it may call every other one);
    /// its entry block calls each function of `calls` first.
    pub(crate) fn add_main(&mut self, call_imports: bool) {
        let sig = Sig {
            ret: Some(Ty::I32),
            params: Vec::new(),
        };
        let f = self.func_decl(sig, "main");
        self.funcs[f].body = true;
        let inst = self.funcs[f].inst;
        self.export(inst, "main");
        let calls: Vec<usize> = if call_imports {
            (0..f).filter(|&i| !self.funcs[i].body).collect()
        } else {
            Vec::new()
        };
        self.gen_body(f, &calls);
    }
}
