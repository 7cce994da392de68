//! The errors of translation: each names where it happened (the function index, when inside a
//! function body, and the byte offset in the binary module) and renders in one line.

use std::fmt;

use irkit_core::CoreError;

/// Where in the input a problem is: an optional function index and a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The index of the function (in wasm's function index space, imports first), when the
    /// problem is in a function body.
    pub func: Option<u32>,
    /// The byte offset in the binary module.
    pub offset: u64,
}

impl Place {
    /// A place outside function bodies.
    pub fn at(offset: u64) -> Place {
        Place { func: None, offset }
    }

    /// A place in the body of function `func`.
    pub fn in_func(func: u32, offset: u64) -> Place {
        Place {
            func: Some(func),
            offset,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.func {
            Some(i) => write!(f, "function {i}, byte offset {:#x}", self.offset),
            None => write!(f, "byte offset {:#x}", self.offset),
        }
    }
}

/// Why a WebAssembly module could not be translated.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum WasmError {
    /// The text form (`.wat`) does not parse; the message is the `wat` crate's, which names the
    /// line and column.
    #[error("invalid WebAssembly text: {0}")]
    Text(String),
    /// The binary module is malformed or invalid; the message and offset are wasmparser's.
    #[error("invalid WebAssembly module at byte offset {offset:#x}: {message}")]
    Invalid {
        /// wasmparser's message.
        message: String,
        /// The byte offset wasmparser reports.
        offset: u64,
    },
    /// A valid module uses something this front end does not translate yet.
    #[error("{place}: {what} is not supported yet")]
    Unsupported {
        /// What is not supported (an operator's name, a kind of definition).
        what: String,
        /// Where it is used.
        place: Place,
    },
    /// Building the irkit module failed: a bug of the front end, reported instead of a panic.
    #[error("{place}: internal error building the irkit module: {source}")]
    Build {
        /// What the builder refused.
        source: CoreError,
        /// Where the translation was.
        place: Place,
    },
}

impl WasmError {
    /// `what` is not supported yet at `place`.
    pub fn unsupported(what: impl Into<String>, place: Place) -> WasmError {
        WasmError::Unsupported {
            what: what.into(),
            place,
        }
    }

    /// A wasmparser error.
    pub fn invalid(e: &wasmparser::BinaryReaderError) -> WasmError {
        WasmError::Invalid {
            message: e.message().to_string(),
            offset: e.offset(),
        }
    }
}

/// Attaches a place to builder errors.
pub(crate) trait At<T> {
    /// The result, with a builder error located at `place`.
    fn at(self, place: Place) -> Result<T, WasmError>;
}

impl<T> At<T> for Result<T, CoreError> {
    fn at(self, place: Place) -> Result<T, WasmError> {
        self.map_err(|source| WasmError::Build { source, place })
    }
}
