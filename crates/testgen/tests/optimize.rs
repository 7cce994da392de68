//! The link-time optimization passes keep every program's behaviour: random linked programs
//! from the generator (module sets with a `main`) run in the reference interpreter with and
//! without the passes, and give the same result, output, or trap kind. A generated indirect
//! call through `select` of one function twice is the case devirtualization rewrites; the test
//! also checks that the passes did rewrite, inline, copy `inline_always` functions and merge
//! jump chains in some, so it cannot pass by doing nothing.

use irkit_format::write;
use irkit_interp::Interpreter;
use irkit_link::{Input, LinkOptions, link};
use irkit_testgen::{Config, Entropy, module_set};

/// How a run ended: the result or the trap's kind, and the output.
fn run(m: &irkit_core::Module) -> (Result<i32, String>, Vec<u8>) {
    let mut it = Interpreter::new(m)
        .expect("a linked program loads")
        .with_fuel(2_000_000);
    let r = it.run_main().map_err(|t| t.kind.to_string());
    (r, it.take_output())
}

fn linked(seed: u64, opts: &LinkOptions) -> irkit_link::Linked {
    let set = module_set(&mut Entropy::from_seed(seed), &Config::default());
    let inputs = set
        .modules
        .iter()
        .map(|(name, m)| Input::from_bytes(name, &write(m).expect("writes")).expect("opens"))
        .collect();
    link(inputs, opts).unwrap_or_else(|e| panic!("seed {seed}: {e}"))
}

#[test]
fn the_passes_keep_every_program_s_behaviour() {
    let seeds: u64 = std::env::var("IRKIT_RANDOM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let (mut rewritten, mut guarded, mut inlined, mut copies, mut merged) = (0, 0, 0, 0, 0);
    for seed in 0..seeds {
        let plain = linked(seed, &LinkOptions::default());
        let opts = LinkOptions {
            devirtualize: true,
            inline: true,
            ..LinkOptions::default()
        };
        let optimized = linked(seed, &opts);
        rewritten += optimized.stats.devirtualized;
        guarded += optimized.stats.devirtualized_guarded;
        inlined += optimized.stats.inlined;
        copies += optimized.stats.inlined_copies;
        merged += optimized.stats.blocks_merged;
        irkit_core::verify::verify(&optimized.module).unwrap_or_else(|e| {
            panic!("seed {seed}: the optimized program does not verify: {e:?}")
        });
        assert_eq!(
            run(&plain.module),
            run(&optimized.module),
            "seed {seed}: the passes changed the program's behaviour"
        );
    }
    assert!(
        rewritten > 0,
        "no call was devirtualized in {seeds} programs"
    );
    eprintln!(
        "{rewritten} calls devirtualized ({guarded} guarded), {inlined} functions inlined, {copies} copies, {merged} blocks merged"
    );
    assert!(guarded > 0, "no guarded call was made in {seeds} programs");
    assert!(inlined > 0, "no function was inlined in {seeds} programs");
    assert!(
        copies > 0,
        "no inline_always copy was made in {seeds} programs"
    );
    assert!(merged > 0, "no jump chain was merged in {seeds} programs");
}
