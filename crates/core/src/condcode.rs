//! Condition codes of `icmp` and `fcmp`, numbered as Ark's Circuit IR numbers them
//! (*Ark Circuit IR*, "Integer/Floating-point binary compare operations"). The number is the
//! instruction's integer payload.

use std::fmt;

macro_rules! cond_codes {
    ($(#[$meta:meta])* $ty:ident { $( $variant:ident = $code:literal, $name:literal, $doc:literal; )* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty {
            $( #[doc = $doc] $variant = $code, )*
        }

        impl $ty {
            /// Every code, in numeric order.
            pub const ALL: &'static [$ty] = &[ $( $ty::$variant, )* ];

            /// The code with this number.
            pub fn from_code(code: u64) -> Option<$ty> {
                match code {
                    $( $code => Some($ty::$variant), )*
                    _ => None,
                }
            }

            /// The code with this text name.
            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $( $name => Some($ty::$variant), )*
                    _ => None,
                }
            }

            /// The text name.
            pub fn name(self) -> &'static str {
                match self {
                    $( $ty::$variant => $name, )*
                }
            }

            /// The number stored in the payload.
            pub fn code(self) -> u64 {
                self as u64
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

cond_codes! {
    /// Integer comparison condition codes.
    IntCC {
        Eq = 0b0001, "eq", "Equal.";
        Ugt = 0b0010, "ugt", "Unsigned greater than.";
        Uge = 0b0011, "uge", "Unsigned greater than or equal.";
        Ult = 0b0100, "ult", "Unsigned less than.";
        Ule = 0b0101, "ule", "Unsigned less than or equal.";
        Ne = 0b0110, "ne", "Not equal.";
        Sgt = 0b1010, "sgt", "Signed greater than.";
        Sge = 0b1011, "sge", "Signed greater than or equal.";
        Slt = 0b1100, "slt", "Signed less than.";
        Sle = 0b1101, "sle", "Signed less than or equal.";
    }
}

cond_codes! {
    /// Float comparison condition codes ("ordered": neither operand is NaN).
    FloatCC {
        False = 0b0000, "false", "Always false.";
        Oeq = 0b0001, "oeq", "Ordered and equal.";
        Ogt = 0b0010, "ogt", "Ordered and greater than.";
        Oge = 0b0011, "oge", "Ordered and greater than or equal.";
        Olt = 0b0100, "olt", "Ordered and less than.";
        Ole = 0b0101, "ole", "Ordered and less than or equal.";
        One = 0b0110, "one", "Ordered and not equal.";
        Ord = 0b0111, "ord", "Ordered (no NaN).";
        Uno = 0b1000, "uno", "Unordered (either is NaN).";
        Ueq = 0b1001, "ueq", "Unordered or equal.";
        Ugt = 0b1010, "ugt", "Unordered or greater than.";
        Uge = 0b1011, "uge", "Unordered or greater than or equal.";
        Ult = 0b1100, "ult", "Unordered or less than.";
        Ule = 0b1101, "ule", "Unordered or less than or equal.";
        Une = 0b1110, "une", "Unordered or not equal.";
        True = 0b1111, "true", "Always true.";
    }
}

impl IntCC {
    /// Evaluates the comparison on two values of `width` bits (held zero-extended in `u64`).
    pub fn eval(self, width: u32, a: u64, b: u64) -> bool {
        let shift = 64 - width.clamp(1, 64);
        let (sa, sb) = (
            ((a << shift) as i64) >> shift,
            ((b << shift) as i64) >> shift,
        );
        match self {
            IntCC::Eq => a == b,
            IntCC::Ne => a != b,
            IntCC::Ugt => a > b,
            IntCC::Uge => a >= b,
            IntCC::Ult => a < b,
            IntCC::Ule => a <= b,
            IntCC::Sgt => sa > sb,
            IntCC::Sge => sa >= sb,
            IntCC::Slt => sa < sb,
            IntCC::Sle => sa <= sb,
        }
    }
}

impl FloatCC {
    /// Evaluates the comparison with IEEE 754 semantics.
    pub fn eval(self, a: f64, b: f64) -> bool {
        let unordered = a.is_nan() || b.is_nan();
        match self {
            FloatCC::False => false,
            FloatCC::True => true,
            FloatCC::Ord => !unordered,
            FloatCC::Uno => unordered,
            FloatCC::Oeq => !unordered && a == b,
            FloatCC::Ogt => !unordered && a > b,
            FloatCC::Oge => !unordered && a >= b,
            FloatCC::Olt => !unordered && a < b,
            FloatCC::Ole => !unordered && a <= b,
            FloatCC::One => !unordered && a != b,
            FloatCC::Ueq => unordered || a == b,
            FloatCC::Ugt => unordered || a > b,
            FloatCC::Uge => unordered || a >= b,
            FloatCC::Ult => unordered || a < b,
            FloatCC::Ule => unordered || a <= b,
            FloatCC::Une => unordered || a != b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for cc in IntCC::ALL {
            assert_eq!(IntCC::from_code(cc.code()), Some(*cc));
            assert_eq!(IntCC::from_name(cc.name()), Some(*cc));
        }
        for cc in FloatCC::ALL {
            assert_eq!(FloatCC::from_code(cc.code()), Some(*cc));
            assert_eq!(FloatCC::from_name(cc.name()), Some(*cc));
        }
    }

    #[test]
    fn signed_compare_respects_width() {
        // 0xff is -1 as i8, 255 unsigned.
        assert!(IntCC::Slt.eval(8, 0xff, 0));
        assert!(IntCC::Ugt.eval(8, 0xff, 0));
        assert!(FloatCC::Une.eval(f64::NAN, 1.0));
        assert!(!FloatCC::One.eval(f64::NAN, 1.0));
    }
}
