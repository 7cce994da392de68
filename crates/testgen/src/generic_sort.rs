//! A generic heapsort ([`heapsort_program`]): the workload that prices sharing a generic
//! (spec/linking.md, "Dynamic generics"). `heapsort<T: Ord, Cell>` calls the generics
//! `sift<T: Ord, Cell>` and `swap<T: Cell>` with its own parameters and reaches memory through
//! the `Cell` witness; `main` fills `n` `i64`s from a linear congruential generator (in C's
//! heap), sorts them, checks the order, and returns 0 (100 if unsorted).
//! Deterministic: the tests run it small on every back end, the bench at a million elements.

/// The program (one module's `.ir` text) sorting `n` (at least 2) elements.
pub fn heapsort_program(n: u64) -> String {
    let n = n.max(2);
    format!(
        r#"; heapsort.ir: a generic heapsort of {n} i64s, through the Ord and Cell witnesses.
@Ord = interface @less
@less: fn(@Ord, @Ord) -> i1 = interface_req
@Cell = interface @Cell.get, @Cell.put
@Cell.get: fn(ptr, i64) -> @Cell = interface_req
@Cell.put: fn(ptr, i64, @Cell) -> void = interface_req

@swap = generic %T, %c {{
  %T = type_param 0 @swap
  %c: @Cell = witness_param 1 @swap, %T
  %fn: fn(ptr, i64, i64) -> void = func {{
  ^entry(%p: ptr, %i: i64, %j: i64):
    %get: fn(ptr, i64) -> %T = lookup_witness %c, @Cell.get
    %put: fn(ptr, i64, %T) -> void = lookup_witness %c, @Cell.put
    %a: %T = call %get(%p, %i)
    %b: %T = call %get(%p, %j)
    call %put(%p, %i, %b)
    call %put(%p, %j, %a)
    ret
  }}
}}

@sift = generic %T, %o, %c {{
  %T = type_param 0 @sift
  %o: @Ord = witness_param 1 @sift, %T
  %c: @Cell = witness_param 2 @sift, %T
  %swap: fn(ptr, i64, i64) -> void = specialize @swap, %T, %c
  %fn: fn(ptr, i64, i64) -> void = func {{
  ^entry(%p: ptr, %root0: i64, %end: i64):
    %lt_fn: fn(%T, %T) -> i1 = lookup_witness %o, @less
    %get: fn(ptr, i64) -> %T = lookup_witness %c, @Cell.get
    jump ^loop(%root0)
  ^loop(%root: i64):
    %twice: i64 = shl %root, i64 1
    %child: i64 = iadd %twice, i64 1
    %has: i1 = icmp slt %child, %end
    br %has, ^pick, ^done
  ^pick:
    %right: i64 = iadd %child, i64 1
    %has_r: i1 = icmp slt %right, %end
    br %has_r, ^cmp_r, ^chosen(%child)
  ^cmp_r:
    %l: %T = call %get(%p, %child)
    %r: %T = call %get(%p, %right)
    %lr: i1 = call %lt_fn(%l, %r)
    %c2: i64 = select %lr, %right, %child
    jump ^chosen(%c2)
  ^chosen(%ch: i64):
    %x: %T = call %get(%p, %root)
    %y: %T = call %get(%p, %ch)
    %lt: i1 = call %lt_fn(%x, %y)
    br %lt, ^down, ^done
  ^down:
    call %swap(%p, %root, %ch)
    jump ^loop(%ch)
  ^done:
    ret
  }}
}}

@heapsort = generic %T, %o, %c {{
  %T = type_param 0 @heapsort
  %o: @Ord = witness_param 1 @heapsort, %T
  %c: @Cell = witness_param 2 @heapsort, %T
  %sift: fn(ptr, i64, i64) -> void = specialize @sift, %T, %o, %c
  %swap: fn(ptr, i64, i64) -> void = specialize @swap, %T, %c
  %fn: fn(ptr, i64) -> void = func {{
  ^entry(%p: ptr, %n: i64):
    %half: i64 = sdiv %n, i64 2
    jump ^build(%half)
  ^build(%s: i64):
    %more: i1 = icmp sgt %s, i64 0
    br %more, ^build_step, ^pop(%n)
  ^build_step:
    %s1: i64 = isub %s, i64 1
    call %sift(%p, %s1, %n)
    jump ^build(%s1)
  ^pop(%end: i64):
    %go: i1 = icmp sgt %end, i64 1
    br %go, ^pop_step, ^done
  ^pop_step:
    %e1: i64 = isub %end, i64 1
    call %swap(%p, i64 0, %e1)
    call %sift(%p, i64 0, %e1)
    jump ^pop(%e1)
  ^done:
    ret
  }}
}}

@i64_less: fn(i64, i64) -> i1 = func {{
^entry(%a: i64, %b: i64):
  %r: i1 = icmp slt %a, %b
  ret %r
}}
@ord_i64: @Ord = witness_table i64 {{
  witness_entry @less, @i64_less
}}
@i64_get: fn(ptr, i64) -> i64 = func {{
^entry(%p: ptr, %i: i64):
  %at: ptr = elem i64, %p, %i
  %v: i64 = load %at
  ret %v
}}
@i64_put: fn(ptr, i64, i64) -> void = func {{
^entry(%p: ptr, %i: i64, %v: i64):
  %at: ptr = elem i64, %p, %i
  store %at, %v
  ret
}}
@cell_i64: @Cell = witness_table i64 {{
  witness_entry @Cell.get, @i64_get
  witness_entry @Cell.put, @i64_put
}}

#[extern("malloc")]
@malloc: fn(i64) -> ptr = func
@sort_i64: fn(ptr, i64) -> void = specialize @heapsort, i64, @ord_i64, @cell_i64

#[export("main")]
@main: fn() -> i32 = func {{
^entry:
  %p: ptr = call @malloc(i64 {bytes})
  jump ^fill(i64 0, i64 12345)
^fill(%i: i64, %x: i64):
  %more: i1 = icmp slt %i, i64 {n}
  br %more, ^fill_step, ^sort
^fill_step:
  %x1: i64 = imul %x, i64 6364136223846793005
  %x2: i64 = iadd %x1, i64 1442695040888963407
  %v: i64 = lshr %x2, i64 33
  %at: ptr = elem i64, %p, %i
  store %at, %v
  %i1: i64 = iadd %i, i64 1
  jump ^fill(%i1, %x2)
^sort:
  call @sort_i64(%p, i64 {n})
  jump ^check(i64 1, i64 0)
^check(%k: i64, %bad: i64):
  %cm: i1 = icmp slt %k, i64 {n}
  br %cm, ^check_step, ^end
^check_step:
  %km: i64 = isub %k, i64 1
  %pa: ptr = elem i64, %p, %km
  %pb: ptr = elem i64, %p, %k
  %a: i64 = load %pa
  %b: i64 = load %pb
  %wrong: i1 = icmp sgt %a, %b
  %w64: i64 = zext %wrong
  %bad1: i64 = iadd %bad, %w64
  %k1: i64 = iadd %k, i64 1
  jump ^check(%k1, %bad1)
^end:
  %isbad: i1 = icmp ne %bad, i64 0
  %r: i32 = select %isbad, i32 100, i32 0
  ret %r
}}
"#,
        bytes = n * 8
    )
}
