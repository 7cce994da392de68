//! Link inputs: binary modules opened in place, or `.ir` text parsed and encoded in memory so
//! that both go through the same lazy reader.

use std::path::Path;

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

impl Input {
    /// Opens the input at `path`, reading it once: a regular file is opened, its first bytes
    /// read through that handle, and then, if they are the binary magic, the same file is
    /// mapped (header, directory checked), else the rest is read as `.ir` text; anything else
    /// (a pipe such as `<(cat x.ir)`, `/dev/fd/N`, or `-` for stdin) is read into memory once
    /// and recognized the same way. Errors name the input as given.
    pub fn open(path: impl AsRef<Path>) -> Result<Input, LinkErrors> {
        use std::io::Read;
        let path = path.as_ref();
        let name = path.display().to_string();
        let io = |e: std::io::Error| {
            LinkErrors(vec![LinkError::Io {
                file: name.clone(),
                message: e.to_string(),
            }])
        };
        if path.as_os_str() == "-" {
            let bytes = irkit_format::read_input(std::io::stdin().lock()).map_err(io)?;
            return Input::from_bytes(&name, &bytes);
        }
        let mut f = std::fs::File::open(path).map_err(io)?;
        if !f.metadata().map_err(io)?.is_file() {
            let bytes = irkit_format::read_input(f).map_err(io)?;
            return Input::from_bytes(&name, &bytes);
        }
        let mut head = Vec::with_capacity(MAGIC.len());
        (&mut f)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(io)?;
        if head == MAGIC {
            let view = ModuleView::from_file(&f, &name)
                .map_err(|e| LinkErrors(vec![LinkError::Read(e)]))?;
            return Ok(Input { name, view });
        }
        use std::io::Seek;
        f.rewind().map_err(io)?;
        let bytes = irkit_format::read_input(f).map_err(io)?;
        Input::from_bytes(&name, &bytes)
    }

    /// An input held in memory, named `name` in messages: a binary module, or `.ir` text.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<Input, LinkErrors> {
        if bytes.starts_with(&MAGIC) {
            let view = ModuleView::from_bytes_named(bytes, name)
                .map_err(|e| LinkErrors(vec![LinkError::Read(e)]))?;
            return Ok(Input {
                name: name.to_string(),
                view,
            });
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Input::from_text(name, text),
            Err(e) => Err(LinkErrors(vec![LinkError::Io {
                file: name.to_string(),
                message: format!(
                    "neither a binary module nor UTF-8 text (invalid byte at offset {})",
                    e.valid_up_to()
                ),
            }])),
        }
    }

    /// A `.ir` text input: parsed, encoded in memory, then read like any binary module.
    pub fn from_text(name: &str, text: &str) -> Result<Input, LinkErrors> {
        let module = irkit_text::parse(text, name).map_err(|errs| {
            LinkErrors(
                errs.errors()
                    .iter()
                    .map(|e| LinkError::Parse(Box::new(e.clone())))
                    .collect(),
            )
        })?;
        let bytes = irkit_format::write(&module).map_err(|e| {
            LinkErrors(vec![LinkError::Encode {
                file: name.to_string(),
                message: e.to_string(),
            }])
        })?;
        let view = ModuleView::from_bytes_named(&bytes, name)
            .map_err(|e| LinkErrors(vec![LinkError::Read(e)]))?;
        Ok(Input {
            name: name.to_string(),
            view,
        })
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
