//! Scratch: query cost profile.
use skillbake_build::generate::route::{build_fields, FieldTexts};
use skillbake_route::index::{query_terms, search, Index};
use skillbake_route::tokenize::Tokenizer;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let checked = skillbake_build::check(&std::path::Path::new(&dir).join("packs"), &Default::default());
    let mut sorted: Vec<_> = checked.skills.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let fields: Vec<FieldTexts> = sorted.iter().map(|s| FieldTexts::of(s)).collect();
    let buckets: Vec<&str> = sorted.iter().map(|s| s.route.bucket.as_str()).collect();
    let built = build_fields(&fields, &buckets).unwrap();
    let ix = Index::new(&built.bytes).unwrap();
    let mut tok = Tokenizer::new();
    let text = std::fs::read_to_string(std::path::Path::new(&dir).join("queries.jsonl")).unwrap();
    let (mut nt, mut np, mut n) = (0usize, 0usize, 0usize);
    let qs: Vec<String> = text.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["query"].as_str().unwrap().to_string()).collect();
    let (mut tq, mut ts) = (0u128, 0u128);
    for q in &qs {
        let t0 = std::time::Instant::now();
        let terms = query_terms(&ix, &mut tok, q);
        let t1 = std::time::Instant::now();
        let _ = search(&ix, &terms, 10, |_| true);
        ts += t1.elapsed().as_nanos();
        tq += (t1 - t0).as_nanos();
        nt += terms.len();
        np += terms.iter().map(|(t, _)| ix.postings(*t).count()).sum::<usize>();
        n += 1;
    }
    println!("queries {n} avg terms {:.1} avg postings {:.0} tokenize+lookup {:.1}us search {:.1}us", nt as f64 / n as f64, np as f64 / n as f64, tq as f64 / n as f64 / 1000.0, ts as f64 / n as f64 / 1000.0);
}
