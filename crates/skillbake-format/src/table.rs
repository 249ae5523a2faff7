//! `named_enum!`: an enum whose variants, their order and their names are one table. It defines
//! `ALL` (every variant, in table order; arrays indexed by a variant are `[T; ALL.len()]`),
//! `NAMES` (the names, for command-line value lists), `name`, `from_name` and `index` (the
//! position in `ALL`, for `.get()` into such arrays).

/// Defines an enum from a table of `Variant = "name"` rows (see the module docs).
#[macro_export]
#[doc(hidden)]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, in table order.
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The name of every variant, in table order (for command-line value lists).
            pub const NAMES: [&'static str; [$($text),+].len()] = [$($text),+];

            /// The variant's name (on the command line, in generated tables).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The variant named `name`, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                match name {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// The variant's position in `ALL` (an index into arrays sized by `ALL.len()`).
            pub const fn index(self) -> usize {
                self as usize
            }
        }
    };
}
