//! Prints a generated module (or module set) as text, for looking at what the generator makes
//! or at a failing seed:
//!
//! ```text
//! cargo run -p irkit-testgen --example show -- 42        # the module of seed 42
//! cargo run -p irkit-testgen --example show -- 42 set    # the module set of seed 42
//! cargo run -p irkit-testgen --example show -- 42 procs  # the proc module of seed 42
//! cargo run -p irkit-testgen --example show -- 42 objects  # the program with classes of seed 42
//! cargo run -p irkit-testgen --example show -- file.bin  # the module a fuzz input makes
//! ```

use irkit_testgen::{Config, Entropy, module, module_set, object_program, proc_module};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = args.first().map(String::as_str).unwrap_or("0");
    let mode = args.get(1).map_or("", String::as_str);
    let bytes;
    let mut e = match arg.parse::<u64>() {
        Ok(seed) => Entropy::from_seed(seed),
        Err(_) => {
            bytes = std::fs::read(arg).unwrap_or_else(|err| panic!("{arg}: {err}"));
            Entropy::new(&bytes)
        }
    };
    if mode == "objects" {
        print!("{:?}", object_program(&mut e, &Config::default()));
    } else if mode == "procs" {
        print!("{:?}", proc_module(&mut e, &Config::default()));
    } else if mode == "set" {
        let cfg = Config {
            dangling_imports: false,
            ..Config::default()
        };
        print!("{:?}", module_set(&mut e, &cfg));
    } else {
        print!("{}", irkit_text::print(&module(&mut e, &Config::default())));
    }
}
