;; Multiple memories (WebAssembly 3.0): each memory is its own record global, with its own size,
;; maximum and growth; a memarg, memory.size/grow/fill/init and each side of memory.copy name
;; theirs, and an active data segment its own.
(module
  (memory $a (export "a") 1)
  (memory $b (export "b") 0 2)
  (data (memory $b) (i32.const 0) "")
  (data (memory $a) (i32.const 8) "\2a")
  (data $later "\05\06\07")
  (func (export "grow_b") (param i32) (result i32)
    (memory.grow $b (local.get 0)))
  (func (export "sizes") (result i32)
    (i32.add (i32.mul (memory.size $a) (i32.const 10)) (memory.size $b)))
  (func (export "load_a") (param i32) (result i32)
    (i32.load8_u $a (local.get 0)))
  (func (export "load_b") (param i32) (result i32)
    (i32.load8_u $b (local.get 0)))
  (func (export "store_b") (param i32 i32)
    (i32.store $b offset=4 (local.get 0) (local.get 1)))
  (func (export "load_b32") (param i32) (result i32)
    (i32.load $b offset=4 (local.get 0)))
  ;; Copies n bytes of memory $a at src to memory $b at dst.
  (func (export "copy_a_to_b") (param $dst i32) (param $src i32) (param $n i32)
    (memory.copy $b $a (local.get $dst) (local.get $src) (local.get $n)))
  (func (export "fill_b") (param $dst i32) (param $v i32) (param $n i32)
    (memory.fill $b (local.get $dst) (local.get $v) (local.get $n)))
  (func (export "init_b") (param $dst i32)
    (memory.init $b $later (local.get $dst) (i32.const 0) (i32.const 3))))
;; invoke sizes
;; => i32:10
;; invoke load_a i32:8
;; => i32:42
;; invoke load_b i32:0
;; => trap: out of bounds memory access
;; invoke grow_b i32:1
;; => i32:0
;; invoke sizes
;; => i32:11
;; invoke load_b i32:8
;; => i32:0
;; invoke copy_a_to_b i32:100 i32:8 i32:1
;; => void
;; invoke load_b i32:100
;; => i32:42
;; invoke store_b i32:65528 i32:305419896
;; => void
;; invoke load_b32 i32:65528
;; => i32:305419896
;; invoke load_b32 i32:65529
;; => trap: out of bounds memory access
;; invoke fill_b i32:200 i32:9 i32:2
;; => void
;; invoke load_b i32:201
;; => i32:9
;; invoke init_b i32:300
;; => void
;; invoke load_b i32:302
;; => i32:7
;; invoke load_a i32:302
;; => i32:0
;; invoke grow_b i32:2
;; => i32:-1
;; invoke grow_b i32:1
;; => i32:1
;; invoke copy_a_to_b i32:131071 i32:0 i32:2
;; => trap: out of bounds memory access
