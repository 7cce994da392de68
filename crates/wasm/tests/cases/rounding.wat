(module
  (func (export "ceil") (param f64) (result f64) local.get 0 f64.ceil)
  (func (export "floor") (param f64) (result f64) local.get 0 f64.floor)
  (func (export "trunc") (param f64) (result f64) local.get 0 f64.trunc)
  (func (export "nearest") (param f64) (result f64) local.get 0 f64.nearest)
  (func (export "ceil32") (param f32) (result f32) local.get 0 f32.ceil)
  (func (export "floor32") (param f32) (result f32) local.get 0 f32.floor)
  (func (export "trunc32") (param f32) (result f32) local.get 0 f32.trunc)
  (func (export "nearest32") (param f32) (result f32) local.get 0 f32.nearest)
  (func (export "sqrt") (param f64) (result f64) local.get 0 f64.sqrt)
  (func (export "sqrt32") (param f32) (result f32) local.get 0 f32.sqrt)
)
;; invoke ceil f64:1.5
;; => f64:0x4000000000000000
;; invoke ceil f64:-1.5
;; => f64:0xbff0000000000000
;; invoke ceil f64:-0.5
;; => f64:0x8000000000000000
;; invoke ceil f64:0.1
;; => f64:0x3ff0000000000000
;; invoke ceil f64:-0
;; => f64:0x8000000000000000
;; invoke ceil f64:4503599627370497
;; => f64:0x4330000000000001
;; invoke ceil f64:0xfff0000000000000
;; => f64:0xfff0000000000000
;; invoke ceil f64:0x7ff4000000000000
;; => f64:0x7ff8000000000000
;; invoke floor f64:1.5
;; => f64:0x3ff0000000000000
;; invoke floor f64:-1.5
;; => f64:0xc000000000000000
;; invoke floor f64:-0.5
;; => f64:0xbff0000000000000
;; invoke floor f64:0.5
;; => f64:0x0000000000000000
;; invoke floor f64:-0
;; => f64:0x8000000000000000
;; invoke floor f64:-4503599627370495.5
;; => f64:0xc330000000000000
;; invoke trunc f64:-1.9
;; => f64:0xbff0000000000000
;; invoke trunc f64:-0.9
;; => f64:0x8000000000000000
;; invoke trunc f64:2.9
;; => f64:0x4000000000000000
;; invoke trunc f64:1e300
;; => f64:0x7e37e43c8800759c
;; invoke nearest f64:0.5
;; => f64:0x0000000000000000
;; invoke nearest f64:1.5
;; => f64:0x4000000000000000
;; invoke nearest f64:2.5
;; => f64:0x4000000000000000
;; invoke nearest f64:-0.5
;; => f64:0x8000000000000000
;; invoke nearest f64:-2.5
;; => f64:0xc000000000000000
;; invoke nearest f64:-3.7
;; => f64:0xc010000000000000
;; invoke nearest f64:4503599627370495.5
;; => f64:0x4330000000000000
;; invoke nearest f64:0x7ff8000000000001
;; => f64:0x7ff8000000000000
;; invoke ceil32 f32:1.25
;; => f32:0x40000000
;; invoke ceil32 f32:-0.75
;; => f32:0x80000000
;; invoke floor32 f32:-1.25
;; => f32:0xc0000000
;; invoke floor32 f32:8388607.5
;; => f32:0x4afffffe
;; invoke trunc32 f32:-7.75
;; => f32:0xc0e00000
;; invoke nearest32 f32:2.5
;; => f32:0x40000000
;; invoke nearest32 f32:3.5
;; => f32:0x40800000
;; invoke nearest32 f32:-0.25
;; => f32:0x80000000
;; invoke nearest32 f32:8388607.5
;; => f32:0x4b000000
;; invoke nearest32 f32:16777216
;; => f32:0x4b800000
;; invoke sqrt f64:2
;; => f64:0x3ff6a09e667f3bcd
;; invoke sqrt f64:-0
;; => f64:0x8000000000000000
;; invoke sqrt f64:-1
;; => f64:0x7ff8000000000000
;; invoke sqrt f64:1e-320
;; => f64:0x1eb67e93ddbc0e73
;; invoke sqrt f64:0x7ff0000000000000
;; => f64:0x7ff0000000000000
;; invoke sqrt32 f32:2
;; => f32:0x3fb504f3
;; invoke sqrt32 f32:1e-45
;; => f32:0x1a3504f3
