//! Running a script: each directive of a `.wast` file against a [`Store`], checked as the
//! WebAssembly specification's script format says.

use std::collections::HashMap;

use irkit_backend::{Backend, Call, RunOptions, trap_kinds};
use wast::parser::{self, ParseBuffer};
use wast::{QuoteWat, Wast, WastDirective, WastExecute, WastInvoke, Wat};

use crate::report::{CommandResult, Report, Verdict};
use crate::store::{InstantiateError, Store};
use crate::values;

/// Runs the script `text` (named `file` in the report) on `backend`.
pub fn run_script(text: &str, file: &str, backend: &dyn Backend, opts: &RunOptions) -> Report {
    run_script_with(text, file, backend, opts, irkit_wasm::features())
}

/// [`run_script`], its modules validated with `features` ([`Store::with_features`]).
pub fn run_script_with(
    text: &str,
    file: &str,
    backend: &dyn Backend,
    opts: &RunOptions,
    features: irkit_wasm::WasmFeatures,
) -> Report {
    let mut report = Report {
        file: file.to_string(),
        results: Vec::new(),
    };
    let mut lexer = wast::lexer::Lexer::new(text);
    // The testsuite's names.wast uses such characters in names on purpose.
    lexer.allow_confusing_unicode(true);
    let buf = match ParseBuffer::new_with_lexer(lexer) {
        Ok(b) => b,
        Err(e) => {
            report.results.push(failed_script(text, e));
            return report;
        }
    };
    let script = match parser::parse::<Wast<'_>>(&buf) {
        Ok(s) => s,
        Err(e) => {
            report.results.push(failed_script(text, e));
            return report;
        }
    };
    let mut store = match Store::with_features(backend, opts, features) {
        Ok(s) => s,
        Err(e) => {
            report.results.push(CommandResult {
                line: 1,
                command: "spectest",
                verdict: Verdict::Failed(format!("the spectest module: {e}")),
            });
            return report;
        }
    };
    let mut r = Runner {
        store: &mut store,
        named: HashMap::new(),
        last: None,
    };
    for d in script.directives {
        let (line, _) = d.span().linecol_in(text);
        let command = name_of(&d);
        let verdict = r.directive(d);
        report.results.push(CommandResult {
            line: line + 1,
            command,
            verdict,
        });
    }
    report
}

fn failed_script(text: &str, mut e: wast::Error) -> CommandResult {
    let (line, _) = e.span().linecol_in(text);
    e.set_text(text);
    let line = line + 1;
    CommandResult {
        line,
        command: "script",
        verdict: Verdict::Failed(format!("the script does not parse: {}", e.message())),
    }
}

struct Runner<'s> {
    store: &'s mut Store,
    /// `$id` of a module → its instance.
    named: HashMap<String, String>,
    /// The instance of the last module instantiated.
    last: Option<String>,
}

fn name_of(d: &WastDirective<'_>) -> &'static str {
    match d {
        WastDirective::Module(_) => "module",
        WastDirective::ModuleDefinition(_) => "module definition",
        WastDirective::ModuleInstance { .. } => "module instance",
        WastDirective::AssertMalformed { .. } => "assert_malformed",
        WastDirective::AssertInvalid { .. } => "assert_invalid",
        WastDirective::AssertInvalidCustom { .. } => "assert_invalid_custom",
        WastDirective::AssertMalformedCustom { .. } => "assert_malformed_custom",
        WastDirective::Register { .. } => "register",
        WastDirective::Invoke(_) => "invoke",
        WastDirective::AssertTrap { .. } => "assert_trap",
        WastDirective::AssertReturn { .. } => "assert_return",
        WastDirective::AssertExhaustion { .. } => "assert_exhaustion",
        WastDirective::AssertUnlinkable { .. } => "assert_unlinkable",
        WastDirective::AssertException { .. } => "assert_exception",
        WastDirective::AssertSuspension { .. } => "assert_suspension",
        WastDirective::Thread(_) => "thread",
        WastDirective::Wait { .. } => "wait",
    }
}

/// What running an `invoke` or `get` produced, or why it could not run.
enum Ran {
    Call(Call),
    NotRun(Verdict),
}

impl Runner<'_> {
    fn directive(&mut self, d: WastDirective<'_>) -> Verdict {
        match d {
            WastDirective::Module(mut q) => {
                let id = q.name().map(|i| i.name().to_string());
                match encode(&mut q) {
                    Err(e) => Verdict::Failed(format!("the module does not assemble: {e}")),
                    Ok(bytes) => match self.store.instantiate(&bytes) {
                        Ok(inst) => {
                            self.bind(id, inst);
                            Verdict::Passed
                        }
                        Err(e) => Verdict::Failed(format!("expected an instance, got: {e}")),
                    },
                }
            }
            WastDirective::AssertMalformed { mut module, .. }
            | WastDirective::AssertInvalid { mut module, .. } => match encode(&mut module) {
                Err(_) => Verdict::Passed,
                Ok(bytes) => match self.store.check(&bytes) {
                    Err(InstantiateError::Invalid(_)) => Verdict::Passed,
                    Err(e) => Verdict::Failed(format!("expected a refusal as invalid, got: {e}")),
                    Ok(()) => {
                        Verdict::Failed("expected a refusal as invalid, got a valid module".into())
                    }
                },
            },
            WastDirective::Register { name, module, .. } => {
                match self.instance(module.map(|i| i.name())) {
                    Ok(inst) => {
                        self.store.register(name, &inst);
                        Verdict::Passed
                    }
                    Err(v) => v,
                }
            }
            WastDirective::Invoke(inv) => match self.invoke(&inv) {
                Ran::NotRun(v) => v,
                Ran::Call(Call::Returned(_)) => Verdict::Passed,
                Ran::Call(other) => {
                    Verdict::Failed(format!("expected a return, got {}", show_call(&other)))
                }
            },
            WastDirective::AssertReturn { exec, results, .. } => self.assert_return(exec, &results),
            WastDirective::AssertTrap { exec, message, .. } => self.assert_trap(exec, message),
            WastDirective::AssertExhaustion { call, message, .. } => match self.invoke(&call) {
                Ran::NotRun(v) => v,
                Ran::Call(Call::Trapped { kind, .. }) if trap_matches(&kind, message) => {
                    Verdict::Passed
                }
                Ran::Call(other) => Verdict::Failed(format!(
                    "expected the trap \"{message}\", got {}",
                    show_call(&other)
                )),
            },
            WastDirective::AssertUnlinkable {
                module, message, ..
            } => {
                let mut q = QuoteWat::Wat(module);
                match encode(&mut q) {
                    Err(e) => Verdict::Failed(format!("the module does not assemble: {e}")),
                    Ok(bytes) => match self.store.instantiate(&bytes) {
                        Err(InstantiateError::Unlinkable(_)) => Verdict::Passed,
                        Err(e) => Verdict::Failed(format!(
                            "expected \"{message}\" from the linker, got: {e}"
                        )),
                        Ok(_) => Verdict::Failed(format!(
                            "expected \"{message}\" from the linker, got an instance"
                        )),
                    },
                }
            }
            WastDirective::ModuleDefinition(_) | WastDirective::ModuleInstance { .. } => {
                Verdict::Skipped("module definitions and instances (a later script format)".into())
            }
            WastDirective::AssertInvalidCustom { .. }
            | WastDirective::AssertMalformedCustom { .. } => {
                Verdict::Skipped("custom section checks (the annotations proposal)".into())
            }
            WastDirective::AssertException { .. } => {
                Verdict::Skipped("exceptions are out of scope".into())
            }
            WastDirective::AssertSuspension { .. } => {
                Verdict::Skipped("stack switching is out of scope".into())
            }
            WastDirective::Thread(_) | WastDirective::Wait { .. } => {
                Verdict::Skipped("threads are out of scope".into())
            }
        }
    }

    fn bind(&mut self, id: Option<String>, inst: String) {
        if let Some(id) = id {
            self.named.insert(id, inst.clone());
        }
        self.last = Some(inst);
    }

    fn instance(&self, id: Option<&str>) -> Result<String, Verdict> {
        match id {
            Some(id) => self
                .named
                .get(id)
                .cloned()
                .ok_or_else(|| Verdict::Failed(format!("no module named ${id}"))),
            None => self
                .last
                .clone()
                .ok_or_else(|| Verdict::Failed("no module instantiated yet".into())),
        }
    }

    fn invoke(&mut self, inv: &WastInvoke<'_>) -> Ran {
        let inst = match self.instance(inv.module.map(|i| i.name())) {
            Ok(i) => i,
            Err(v) => return Ran::NotRun(v),
        };
        let mut args = Vec::with_capacity(inv.args.len());
        for a in &inv.args {
            match values::arg(a) {
                Ok(v) => args.push(v),
                Err(why) => return Ran::NotRun(Verdict::Skipped(why)),
            }
        }
        match self.store.invoke(&inst, inv.name, &args) {
            Ok(c) => Ran::Call(c),
            Err(e) => Ran::NotRun(Verdict::Failed(format!("the call failed: {e}"))),
        }
    }

    fn execute(&mut self, exec: WastExecute<'_>) -> Ran {
        match exec {
            WastExecute::Invoke(inv) => self.invoke(&inv),
            WastExecute::Get { module, global, .. } => {
                let inst = match self.instance(module.map(|i| i.name())) {
                    Ok(i) => i,
                    Err(v) => return Ran::NotRun(v),
                };
                match self.store.get(&inst, global) {
                    Ok(c) => Ran::Call(c),
                    Err(e) => {
                        Ran::NotRun(Verdict::Failed(format!("reading the global failed: {e}")))
                    }
                }
            }
            WastExecute::Wat(w) => {
                let mut q = QuoteWat::Wat(w);
                match encode(&mut q) {
                    Err(e) => Ran::NotRun(Verdict::Failed(format!(
                        "the module does not assemble: {e}"
                    ))),
                    Ok(bytes) => match self.store.instantiate(&bytes) {
                        Ok(_) => Ran::Call(Call::Returned(Vec::new())),
                        Err(InstantiateError::Trapped { kind }) => Ran::Call(Call::Trapped {
                            message: format!("trap: {kind}"),
                            kind,
                        }),
                        Err(e) => {
                            Ran::NotRun(Verdict::Failed(format!("expected an instance, got: {e}")))
                        }
                    },
                }
            }
        }
    }

    fn assert_return(&mut self, exec: WastExecute<'_>, results: &[wast::WastRet<'_>]) -> Verdict {
        let mut expected = Vec::with_capacity(results.len());
        for r in results {
            match values::expected(r) {
                Ok(e) => expected.push(e),
                Err(why) => return Verdict::Skipped(why),
            }
        }
        let got = match self.execute(exec) {
            Ran::NotRun(v) => return v,
            Ran::Call(Call::Returned(vs)) => vs,
            Ran::Call(other) => {
                return Verdict::Failed(format!(
                    "expected {}, got {}",
                    values::show_all(&expected, |e| e.to_string()),
                    show_call(&other)
                ));
            }
        };
        let ok =
            got.len() == expected.len() && expected.iter().zip(&got).all(|(e, v)| e.matches(*v));
        if ok {
            Verdict::Passed
        } else {
            Verdict::Failed(format!(
                "expected {}, got {}",
                values::show_all(&expected, |e| e.to_string()),
                values::show_all(&got, |v| values::show(*v))
            ))
        }
    }

    fn assert_trap(&mut self, exec: WastExecute<'_>, message: &str) -> Verdict {
        match self.execute(exec) {
            Ran::NotRun(v) => v,
            Ran::Call(Call::Trapped { kind, .. }) if trap_matches(&kind, message) => {
                Verdict::Passed
            }
            Ran::Call(other) => Verdict::Failed(format!(
                "expected the trap \"{message}\", got {}",
                show_call(&other)
            )),
        }
    }
}

fn encode(q: &mut QuoteWat<'_>) -> Result<Vec<u8>, String> {
    if let QuoteWat::Wat(Wat::Component(_)) | QuoteWat::QuoteComponent(..) = q {
        return Err("a component (the component model is out of scope)".into());
    }
    q.encode().map_err(|e| e.message())
}

fn show_call(c: &Call) -> String {
    match c {
        Call::Returned(vs) => format!("the return {}", values::show_all(vs, |v| values::show(*v))),
        Call::Trapped { kind, .. } => format!("the trap \"{kind}\""),
        Call::Exited(code) => format!("exit({code})"),
    }
}

/// The WebAssembly specification's wording of a back end's trap kind.
pub fn wasm_trap_message(kind: &str) -> &str {
    match kind {
        trap_kinds::DIVISION_BY_ZERO => "integer divide by zero",
        trap_kinds::INTEGER_OVERFLOW => "integer overflow",
        trap_kinds::UNREACHABLE => "unreachable",
        k if k.starts_with("stack overflow") => "call stack exhausted",
        k => k,
    }
}

/// Whether a trap of kind `kind` is the trap a script expects by `expected` (the
/// specification's message, which scripts sometimes extend or shorten).
pub fn trap_matches(kind: &str, expected: &str) -> bool {
    let ours = wasm_trap_message(kind);
    ours.starts_with(expected) || expected.starts_with(ours)
}
