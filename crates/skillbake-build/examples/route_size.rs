//! Scratch: index size by field.
use skillbake_build::generate::route::{build_fields, FieldTexts};
fn main() {
    let dir = std::env::args().nth(1).unwrap_or("skills".into());
    let checked = skillbake_build::check(std::path::Path::new(&dir), &Default::default());
    let mut sorted: Vec<_> = checked.skills.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let fields: Vec<FieldTexts> = sorted.iter().map(|s| FieldTexts::of(s)).collect();
    let buckets: Vec<&str> = sorted.iter().map(|s| s.route.bucket.as_str()).collect();
    let body: usize = sorted.iter().map(|s| s.body.len()).sum();
    let full = build_fields(&fields, &buckets).unwrap();
    println!("packs {} body bytes {} full {:?}", sorted.len(), body, full.stats);
    for drop in 0..8 {
        let f2: Vec<FieldTexts> = fields.iter().map(|f| { let mut f = f.clone(); f.texts[drop].clear(); f }).collect();
        let b = build_fields(&f2, &buckets).unwrap();
        println!("without field {drop}: {:?}", b.stats);
    }
}
