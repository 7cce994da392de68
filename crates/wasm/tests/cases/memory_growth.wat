;; memory.grow is `mem_grow`, whose back ends keep room past the size (spec/backends.md,
;; "Linear memories"): a growth within it only moves the size, one past it moves the bytes
;; to a block twice as large. Either way the old bytes stay, the new pages read zero, the bytes past the size stay out of
;; bounds, and the maximum holds.
(module
  (memory (export "mem") 1 10)
  (func (export "grow") (param i32) (result i32)
    local.get 0
    memory.grow)
  (func (export "size") (result i32)
    memory.size)
  (func (export "load") (param i32) (result i32)
    local.get 0
    i32.load)
  (func (export "store") (param i32 i32)
    local.get 0
    local.get 1
    i32.store)
  ;; The sum of the i32 words from byte $a to the end of the memory.
  (func (export "sum_from") (param $a i32) (result i32)
    (local $s i32)
    (block $done
      (loop $l
        (br_if $done
          (i32.ge_u (local.get $a) (i32.mul (memory.size) (i32.const 65536))))
        (local.set $s (i32.add (local.get $s) (i32.load (local.get $a))))
        (local.set $a (i32.add (local.get $a) (i32.const 4)))
        (br $l)))
    (local.get $s)))
;; invoke store i32:65532 i32:7
;; => void
;; invoke grow i32:1
;; => i32:1
;; invoke load i32:65532
;; => i32:7
;; invoke sum_from i32:65536
;; => i32:0
;; invoke store i32:131068 i32:9
;; => void
;; invoke grow i32:1
;; => i32:2
;; invoke load i32:65532
;; => i32:7
;; invoke load i32:131068
;; => i32:9
;; invoke load i32:196608
;; => trap: out of bounds memory access
;; invoke grow i32:1
;; => i32:3
;; invoke sum_from i32:196608
;; => i32:0
;; invoke load i32:262140
;; => i32:0
;; invoke load i32:262144
;; => trap: out of bounds memory access
;; invoke grow i32:0
;; => i32:4
;; invoke grow i32:7
;; => i32:-1
;; invoke size
;; => i32:4
;; invoke grow i32:6
;; => i32:4
;; invoke size
;; => i32:10
;; invoke sum_from i32:0
;; => i32:16
;; invoke load i32:655356
;; => i32:0
;; invoke grow i32:1
;; => i32:-1
