//! Link inputs: binary modules, opened in place (a file is mapped) or held in memory. The
//! linker reads nothing else: a front end (the CLI for `.ir` text, `irkit-wasm` for
//! WebAssembly) builds a [`Module`] and hands it over with [`Input::from_module`], which encodes
//! it in memory so that every input goes through the same lazy reader.

use std::path::Path;

use irkit_core::Module;
use irkit_format::{MAGIC, ModuleView};

use crate::error::{LinkError, LinkErrors};

/// One opened input module.
pub struct Input {
    pub(crate) name: String,
    pub(crate) view: ModuleView,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input").field("name", &self.name).finish()
    }
}

/// What [`Input::open`] found at a path, read once.
#[derive(Debug)]
pub enum Opened {
    /// A binary module.
    Module(Box<Input>),
    /// Anything else (`.ir` text, say), read into memory, for the caller to recognize: `name` as
    /// given, and the bytes.
    Other(String, Vec<u8>),
}

impl Opened {
    /// The binary module opened, or an error naming the input if it was something else.
    pub fn module(self) -> Result<Input, LinkErrors> {
        match self {
            Opened::Module(input) => Ok(*input),
            Opened::Other(file, _) => Err(LinkErrors(vec![LinkError::NotBinary { file }])),
        }
    }
}

impl Input {
    /// Opens the input at `path`, reading it once: a regular file is opened, its first bytes
    /// read through that handle, and then, if they are the binary magic, the same file is
    /// mapped (header, directory checked), else the rest is read into memory; anything else
    /// (a pipe such as `<(cat x.ir)`, `/dev/fd/N`, or `-` for stdin) is read into memory once
    /// and recognized the same way. Errors name the input as given.
    pub fn open(path: impl AsRef<Path>) -> Result<Opened, LinkErrors> {
        use std::io::Read;
        let path = path.as_ref();
        let name = path.display().to_string();
        let io = |e: std::io::Error| {
            LinkErrors(vec![LinkError::Io {
                file: name.clone(),
                message: e.to_string(),
            }])
        };
        let in_memory = |bytes: Vec<u8>| {
            if bytes.starts_with(&MAGIC) {
                Input::from_bytes(&name, &bytes).map(|i| Opened::Module(Box::new(i)))
            } else {
                Ok(Opened::Other(name.clone(), bytes))
            }
        };
        if path.as_os_str() == "-" {
            return in_memory(irkit_format::read_input(std::io::stdin().lock()).map_err(io)?);
        }
        let mut f = std::fs::File::open(path).map_err(io)?;
        if !f.metadata().map_err(io)?.is_file() {
            return in_memory(irkit_format::read_input(f).map_err(io)?);
        }
        let mut head = Vec::with_capacity(MAGIC.len());
        (&mut f)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        if head == MAGIC {
            let view = ModuleView::from_file(&f, &name)
                .map_err(|e| LinkErrors(vec![LinkError::Read(e)]))?;
            return Ok(Opened::Module(Box::new(Input { name, view })));
        }
        use std::io::Seek;
        f.rewind().map_err(io)?;
        in_memory(irkit_format::read_input(f).map_err(io)?)
    }

    /// A binary module held in memory, named `name` in messages.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Input, LinkErrors> {
        if !bytes.starts_with(&MAGIC) {
            return Err(LinkErrors(vec![LinkError::NotBinary {
                file: name.to_string(),
            }]));
        }
        let view = ModuleView::from_bytes_named(bytes, name)
            .map_err(|e| LinkErrors(vec![LinkError::Read(e)]))?;
        Ok(Input {
            name: name.to_string(),
            view,
        })
    }

    /// A module built in memory by a front end, named `name` in messages: encoded, then read
    /// like any binary module.
    pub fn from_module(name: &str, module: &Module) -> Result<Input, LinkErrors> {
        let bytes = irkit_format::write(module).map_err(|e| {
            LinkErrors(vec![LinkError::Encode {
                file: name.to_string(),
                message: e.to_string(),
            }])
        })?;
        Input::from_bytes(name, &bytes)
    }

    /// An already opened module, named `name` in messages.
    pub fn from_view(name: &str, view: ModuleView) -> Input {
        Input {
            name: name.to_string(),
            view,
        }
    }

    /// The name used in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The opened module.
    pub fn view(&self) -> &ModuleView {
        &self.view
    }
}
