//! Which generic functions are shared (spec/linking.md, "Dynamic generics", "Who is shared").
//!
//! 1. A generic decorated `dynamic_dispatch` is asked to be shared, one decorated
//!    `specialize_always` is never shared; for the others the option decides ([`Generics`]):
//!    none, all, or (`auto`) those with more than `max_instances` instances and a body of at
//!    least [`MIN_SHARED_BODY`] instructions.
//! 2. A generic's instances are counted before specialization: the distinct module-level
//!    `specialize` values of it, plus, for each generic that names it with its own parameters,
//!    that generic's count (each of its instances makes one; a call of itself with its own
//!    parameters makes none). Counts saturate just above the threshold, so cycles end.
//! 3. A generic asked to be shared that the lowering cannot take ([`super::analysis`]) is
//!    cloned, and the reason kept for `--stats` (for a `dynamic_dispatch` one, the link fails
//!    with it).
//! 4. The generics a shared generic calls with its own parameters are shared with it; when one
//!    of them cannot be (it is `specialize_always`, or the lowering cannot take it), the caller
//!    is cloned instead. This repeats until nothing changes.

use std::collections::{BTreeMap, HashMap, HashSet};

use irkit_core::{Inst, Module, Opcode};

use super::Generics;
use super::analysis::{Info, analyze};
use crate::error::LinkError;
use crate::label::label;

/// The generics to share, and the reasons of those asked for that are cloned.
#[derive(Debug, Default)]
pub(crate) struct Choice {
    pub(crate) shared: HashMap<Inst, Info>,
    pub(crate) fallbacks: Vec<String>,
    /// The generics an `exists_open` calls (all shared).
    pub(crate) opened: HashSet<Inst>,
}

/// What a generic's decorations ask for.
fn asked(m: &Module, g: Inst) -> Option<bool> {
    if m.find_decoration(g, Opcode::SPECIALIZE_ALWAYS).is_some() {
        Some(false)
    } else if m.find_decoration(g, Opcode::DYNAMIC_DISPATCH).is_some() {
        Some(true)
    } else {
        None
    }
}

/// The generics an `exists_open` calls: they must be shared (the type is only known at run
/// time).
fn opened(m: &Module) -> Result<HashSet<Inst>, LinkError> {
    let mut out = HashSet::new();
    for i in m.walk() {
        if m.opcode(i) == Opcode::EXISTS_OPEN
            && let Some(&g) = m.operands(i).first()
        {
            if m.find_decoration(g, Opcode::SPECIALIZE_ALWAYS).is_some() {
                return Err(LinkError::Specialize(format!(
                    "{} is `specialize_always`, but an `exists_open` calls it at a type known only at run time",
                    label(m, g)
                )));
            }
            out.insert(g);
        }
    }
    Ok(out)
}

/// Chooses the generics of `m` to share under `policy`.
pub(crate) fn choose(m: &Module, policy: Generics) -> Result<Choice, LinkError> {
    let opened = opened(m)?;
    let asked = |m: &Module, g: Inst| {
        if opened.contains(&g) {
            Some(true)
        } else {
            asked(m, g)
        }
    };
    // Generic functions with a body, in module order (BTreeMap: a deterministic order).
    let generics: Vec<Inst> = m
        .top_level()
        .iter()
        .copied()
        .filter(|&g| {
            m.opcode(g) == Opcode::GENERIC
                && matches!(m.children(g), [c] if m.opcode(*c) == Opcode::FUNC
                    && m.entry_block(*c).is_some())
        })
        .collect();
    if generics.is_empty() {
        return Ok(Choice::default());
    }
    let wanted: Vec<Inst> = match policy {
        Generics::Specialize => generics
            .iter()
            .copied()
            .filter(|&g| asked(m, g) == Some(true))
            .collect(),
        Generics::Dynamic => generics
            .iter()
            .copied()
            .filter(|&g| asked(m, g) != Some(false))
            .collect(),
        Generics::Auto { max_instances } => {
            let counts = instance_counts(m, &generics, max_instances.saturating_add(1));
            generics
                .iter()
                .copied()
                .filter(|&g| match asked(m, g) {
                    Some(a) => a,
                    None => {
                        counts.get(&g).copied().unwrap_or(0) > max_instances
                            && body_size(m, g) >= MIN_SHARED_BODY
                    }
                })
                .collect()
        }
    };
    let mut infos: BTreeMap<Inst, Result<Info, String>> = BTreeMap::new();
    let mut shared: BTreeMap<Inst, Info> = BTreeMap::new();
    let mut fallbacks = Vec::new();
    for g in wanted {
        match analyze(m, g) {
            Ok(i) => {
                shared.insert(g, i);
            }
            Err(why) if asked(m, g) == Some(true) => {
                return Err(LinkError::Specialize(format!(
                    "{} must be shared (it is `dynamic_dispatch`, or an `exists_open` calls it) but cannot be: {why}",
                    label(m, g)
                )));
            }
            Err(why) => fallbacks.push(format!("{} is cloned: {why}", label(m, g))),
        }
    }
    // Step 4: close over the generics the shared ones call with their own parameters.
    loop {
        let mut add: Vec<(Inst, Info)> = Vec::new();
        let mut drop: Vec<(Inst, String)> = Vec::new();
        for (&g, info) in &shared {
            for &h in &info.calls {
                if shared.contains_key(&h) || add.iter().any(|(a, _)| *a == h) {
                    continue;
                }
                let verdict = if asked(m, h) == Some(false) {
                    Err("`specialize_always`".to_string())
                } else {
                    infos.entry(h).or_insert_with(|| analyze(m, h)).clone()
                };
                match verdict {
                    Ok(i) => add.push((h, i)),
                    Err(why) => drop.push((
                        g,
                        format!("it calls {}, which is cloned ({why})", label(m, h)),
                    )),
                }
            }
        }
        if add.is_empty() && drop.is_empty() {
            break;
        }
        shared.extend(add);
        for (g, why) in drop {
            if shared.remove(&g).is_some() {
                if asked(m, g) == Some(true) {
                    return Err(LinkError::Specialize(format!(
                        "{} must be shared (it is `dynamic_dispatch`, or an `exists_open` calls it) but cannot be: {why}",
                        label(m, g)
                    )));
                }
                fallbacks.push(format!("{} is cloned: {why}", label(m, g)));
            }
        }
    }
    Ok(Choice {
        shared: shared.into_iter().collect(),
        fallbacks,
        opened,
    })
}

/// The fewest instructions a generic's body has for `auto` to share it: an instance of the
/// shared version costs a wrapper (a slot, a store and a load per value of a type parameter,
/// and the call), a descriptor and a thunk per requirement, so a smaller body is cheaper to
/// clone however many instances it has (`max<T: Ord>`, four instructions, is).
pub(crate) const MIN_SHARED_BODY: usize = 8;

/// The instructions of generic `g`'s function body (block parameters not counted).
fn body_size(m: &Module, g: Inst) -> usize {
    let Some(&f) = m.children(g).first() else {
        return 0;
    };
    m.blocks(f)
        .map(|b| {
            m.children(b)
                .iter()
                .filter(|&&i| m.opcode(i) != Opcode::PARAM)
                .count()
        })
        .sum()
}

/// Each generic's instance count (step 2), saturated at `cap`.
fn instance_counts(m: &Module, generics: &[Inst], cap: u64) -> HashMap<Inst, u64> {
    let root = m.root();
    let mut direct: HashMap<Inst, u64> = HashMap::new();
    // (caller generic, callee generic)
    let mut edges: Vec<(Inst, Inst)> = Vec::new();
    for &s in m.pool() {
        if m.opcode(s) != Opcode::SPECIALIZE {
            continue;
        }
        let Some((&h, args)) = m.operands(s).split_first() else {
            continue;
        };
        match m.parent(s) {
            Some(p) if p == root => *direct.entry(h).or_insert(0) += 1,
            // A call of itself with its own parameters is no new instance.
            Some(c) if m.opcode(c) == Opcode::GENERIC && !(c == h && args == m.operands(c)) => {
                edges.push((c, h));
            }
            _ => {}
        }
    }
    let mut counts: HashMap<Inst, u64> = generics
        .iter()
        .map(|&g| (g, direct.get(&g).copied().unwrap_or(0).min(cap)))
        .collect();
    // At most one round per generic (a chain is at most that long); each round only raises
    // counts, never above `cap`.
    for _ in 0..=generics.len() {
        let mut next: HashMap<Inst, u64> = generics
            .iter()
            .map(|&g| (g, direct.get(&g).copied().unwrap_or(0)))
            .collect();
        for &(c, h) in &edges {
            let add = counts.get(&c).copied().unwrap_or(0);
            if let Some(v) = next.get_mut(&h) {
                *v = v.saturating_add(add);
            }
        }
        for v in next.values_mut() {
            *v = (*v).min(cap);
        }
        if next == counts {
            break;
        }
        counts = next;
    }
    counts
}
