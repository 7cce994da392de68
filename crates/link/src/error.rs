//! The linker's errors: one variant per kind of problem, each displayed on one line.

use std::fmt;

use irkit_format::ReadError;

/// The chain of reached definitions that needs something: the definition whose body refers to
/// it first, then the one that reached that definition, and so on up to a root. Displayed as
/// `@f (b.irm) <- @g (a.irm) <- @main (main.irm)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain(pub Vec<ChainLink>);

/// One definition of a [`Chain`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainLink {
    /// Its name: export name, else import or extern name, else name hint, else `#index`.
    pub name: String,
    /// The input file it comes from.
    pub file: String,
}

impl fmt::Display for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("the command line");
        }
        for (i, l) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" <- ")?;
            }
            write!(f, "@{} ({})", l.name, l.file)?;
        }
        Ok(())
    }
}

/// One link problem. `Display` is one line, without a leading `error: `.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// An input that cannot be read, or a binary module that is malformed or of an
    /// incompatible version (the message names the file and the section or definition).
    #[error("{0}")]
    Read(#[from] ReadError),
    /// An input file that cannot be read from disk.
    #[error("{file}: cannot read: {message}")]
    Io {
        /// The input.
        file: String,
        /// The I/O error.
        message: String,
    },
    /// An input that is not a binary module (text is the caller's to parse: see
    /// [`Input::open`](crate::Input::open) and [`Input::from_module`](crate::Input::from_module)).
    #[error("{file}: not a binary module (no `IRKMOD` magic)")]
    NotBinary {
        /// The input.
        file: String,
    },
    /// A module given in memory that has no binary encoding.
    #[error("{file}: cannot encode: {message}")]
    Encode {
        /// The input.
        file: String,
        /// Why.
        message: String,
    },
    /// A link-time optimization pass failed on a module it should accept: a bug of the pass
    /// (the link is refused rather than written wrong).
    #[error("internal error in the {pass} pass: {message}")]
    Pass {
        /// The pass.
        pass: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The entry point is exported by no input.
    #[error("undefined entry point @{name}: no input exports it")]
    MissingEntry {
        /// The entry point's name.
        name: String,
    },
    /// A name given with `--export` is exported by no input.
    #[error("undefined symbol @{name}, requested by --export")]
    MissingExport {
        /// The requested name.
        name: String,
    },
    /// A reached import that no input exports (in an executable link).
    #[error("undefined symbol @{name}, needed by {chain}")]
    Undefined {
        /// The imported name.
        name: String,
        /// Who needs it.
        chain: Chain,
    },
    /// A reached name whose re-export chain ends at an import no input exports (in an
    /// executable link).
    #[error("undefined symbol @{name}, through the re-exports {via}, needed by {chain}")]
    UndefinedReexport {
        /// The last name of the chain, which no input exports.
        name: String,
        /// The re-exports followed, each name with the file re-exporting it, then the name
        /// left undefined: `@c (o.irm) -> @b (n.irm) -> @a`.
        via: String,
        /// Who needs it (the command line for a root).
        chain: Chain,
    },
    /// Re-exports that lead back to a name of the chain: `@b (n.irm) -> @a (m.irm) -> @b`,
    /// each re-exporting the next name.
    #[error("re-export cycle: {chain}")]
    ReexportCycle {
        /// The cycle, from the first name reached back to it.
        chain: String,
    },
    /// A re-export chain longer than the limit.
    #[error("re-export chain longer than {limit} names: {chain}")]
    ReexportTooLong {
        /// The limit.
        limit: usize,
        /// The chain's first names.
        chain: String,
    },
    /// An import whose declared type differs from the type of the export it resolves to.
    #[error(
        "type mismatch for @{name}: {import_file} imports it as `{import_ty}`, {export_file} \
         exports `{export_ty}`"
    )]
    TypeMismatch {
        /// The symbol.
        name: String,
        /// The importing input.
        import_file: String,
        /// The import's declared type, in the text syntax.
        import_ty: String,
        /// The exporting input.
        export_file: String,
        /// The export's type, in the text syntax.
        export_ty: String,
    },
    /// An import whose kind (function, variable, constant) differs from the export's.
    #[error(
        "kind mismatch for @{name}: {import_file} imports a `{import_kind}`, {export_file} \
         exports a `{export_kind}`"
    )]
    KindMismatch {
        /// The symbol.
        name: String,
        /// The importing input.
        import_file: String,
        /// The import's opcode.
        import_kind: String,
        /// The exporting input.
        export_file: String,
        /// The export's opcode.
        export_kind: String,
    },
    /// Two declarations of one unresolved import or C symbol with different types.
    #[error(
        "conflicting declarations of @{name}: `{first_ty}` in {first_file}, `{second_ty}` in \
         {second_file}"
    )]
    DeclarationMismatch {
        /// The symbol.
        name: String,
        /// The first declaring input.
        first_file: String,
        /// Its type.
        first_ty: String,
        /// The other declaring input.
        second_file: String,
        /// Its type.
        second_ty: String,
    },
    /// Two strong (neither `weak` nor `linkonce`) definitions exported under one name.
    #[error("duplicate definition of @{name}: in {first} and in {second}")]
    Duplicate {
        /// The symbol.
        name: String,
        /// The first defining input.
        first: String,
        /// The other defining input.
        second: String,
    },
    /// `linkonce` copies of one name whose contents differ.
    #[error(
        "linkonce @{name} differs between {first} and {second} (not the same code, compared with \
         everything it reaches privately)"
    )]
    LinkonceMismatch {
        /// The symbol.
        name: String,
        /// The first defining input.
        first: String,
        /// The other defining input.
        second: String,
    },
    /// A reached `stub` definition without `--link-stubs`.
    #[error("@{name} ({file}) is a stub, needed by {chain}; use --link-stubs to link stubs")]
    Stub {
        /// The stub's name.
        name: String,
        /// Its input.
        file: String,
        /// Who needs it.
        chain: Chain,
    },
    /// Specialization went deeper than the limit (polymorphic recursion): the chain of
    /// instantiations, innermost first.
    #[error("specialization deeper than {limit} instantiations (polymorphic recursion?): {chain}")]
    InstantiationLimit {
        /// The limit ([`LinkOptions::max_instantiation_depth`](crate::LinkOptions)).
        limit: usize,
        /// The chain, innermost first.
        chain: String,
    },
    /// Instantiating generics built a value nested deeper than the nesting limit
    /// ([`irkit_core::MAX_NESTING`]): e.g. `struct {struct {T}}` with `T` already at the
    /// limit. Every input was within it; the linked module would not be.
    #[error(
        "instantiating generics built a type or constant nested deeper than {limit} levels \
         (the nesting limit){at}"
    )]
    TooDeep {
        /// The limit, [`irkit_core::MAX_NESTING`].
        limit: u32,
        /// `, in @name`: the first definition whose type is too deep, if one is.
        at: String,
    },
    /// A `specialize` that cannot be instantiated.
    #[error("cannot specialize: {0}")]
    Specialize(String),
    /// A class, trait or object that cannot be laid out, or an object instruction naming a
    /// member its class lacks (spec/linking.md, "Objects"): one line naming both.
    #[error("{0}")]
    Objects(String),
    /// The linked module fails verification: a bug in the linker or in the inputs' contents
    /// that only shows once linked (one verifier message).
    #[error("the linked program does not verify: {0}")]
    Verify(String),
    /// The linked module cannot be encoded or built (a linker bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Every problem of a failed link, in a deterministic order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkErrors(pub Vec<LinkError>);

impl LinkErrors {
    /// The problems.
    pub fn errors(&self) -> &[LinkError] {
        &self.0
    }
}

impl fmt::Display for LinkErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LinkErrors {}

impl LinkError {
    /// The problem as a tool shows it: `error: ` and the one line of `Display`.
    pub fn render(&self) -> String {
        format!("error: {self}")
    }
}
