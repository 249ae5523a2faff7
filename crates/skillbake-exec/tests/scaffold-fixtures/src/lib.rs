//! The packs `skillbake new` creates (`new-plain`, `new-python`, `new-bash`, `new-node`),
//! compiled in: the command's tests run them through the executor that `skillbake run` uses.

#![forbid(unsafe_code)]

skillbake::include_skills!();
