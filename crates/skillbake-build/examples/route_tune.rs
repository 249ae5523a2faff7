//! Scratch: weight exploration.
use skillbake_build::generate::route::{build_fields_with, FieldTexts, Weights};
use skillbake_route::index::{query_terms, search, Index};
use skillbake_route::tokenize::Tokenizer;
static TIES_N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let dir = std::path::Path::new(&dir);
    let checked = skillbake_build::check(&dir.join("packs"), &Default::default());
    let mut sorted: Vec<_> = checked.skills.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let names: Vec<&str> = sorted.iter().map(|s| s.name.as_str()).collect();
    let fields: Vec<FieldTexts> = sorted.iter().map(|s| FieldTexts::of(s)).collect();
    let buckets: Vec<&str> = sorted.iter().map(|s| s.route.bucket.as_str()).collect();
    let text = std::fs::read_to_string(dir.join("queries.jsonl")).unwrap();
    let qs: Vec<(String, Vec<String>)> = text.lines().map(|l| { let v: serde_json::Value = serde_json::from_str(l).unwrap(); (v["query"].as_str().unwrap().to_string(), v["relevant"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()) }).collect();
    let d = Weights::DEFAULT;
    let mut configs: Vec<(String, Weights)> = vec![("default".into(), d)];
    let mut m = d; m.fields = [(1.5, 0.5), (1.5, 0.75), (1.5, 0.75), (1.2, 0.5), (1.0, 0.75), (0.8, 0.75), (0.8, 0.75), (1.5, 0.75)]; configs.push(("moderate".into(), m));
    let mut m2 = m; m2.fields[5].0 = 1.0; configs.push(("moderate2".into(), m2));
    let mut flat = d; for f in &mut flat.fields { *f = (1.0, 0.75); } configs.push(("flat".into(), flat));
    for (i, w) in [(0usize, 1.0), (0, 2.0), (1, 1.0), (1, 3.0), (3, 0.5), (3, 3.0), (4, 0.5), (4, 2.0), (5, 0.2), (5, 0.7), (5, 1.0), (6, 0.3)] { let mut c = d; c.fields[i].0 = w; configs.push((format!("f{i}={w}"), c)); }
    for b in [0.3, 0.5, 0.9] { let mut c = d; for f in &mut c.fields { f.1 = b; } configs.push((format!("b={b}"), c)); }
    for k1 in [0.9, 1.5, 2.0] { let mut c = d; c.k1 = k1; configs.push((format!("k1={k1}"), c)); }
    for u in [0.0, 0.1, 0.5, 1.0] { let mut c = d; c.unigram = u; configs.push((format!("uni={u}"), c)); }
    use skillbake_route::tokenize::Options;
    for (n, o) in [("noident", Options { identifiers: false, ..Options::DEFAULT }), ("nostem", Options { stem: false, ..Options::DEFAULT }), ("nostop", Options { stop_words: false, ..Options::DEFAULT })] {
        let mut c = d; c.tokenizer = o; configs.push((n.into(), c));
        let mut c = flat; c.tokenizer = o; configs.push((format!("flat+{n}"), c));
    }
    let keep: Vec<String> = std::env::args().skip(2).collect();
    if let Ok(q) = std::env::var("EXPLAIN") {
        let built = build_fields_with(&fields, &buckets, &d).unwrap();
        let ix = Index::new(&built.bytes).unwrap();
        let mut tok = Tokenizer::new();
        let terms = tok.collect(&q);
        let hits = search(&ix, &query_terms(&ix, &mut tok, &q), 5, |_| true);
        let want: Vec<u32> = hits.iter().map(|h| h.doc).chain(std::env::var("DOC").ok().and_then(|n| names.iter().position(|x| *x == n)).map(|p| p as u32)).collect();
        for doc in want {
            let mut line = format!("{}:", names[doc as usize]);
            let mut total = 0f64;
            for (t, _) in &terms { if let Some(tt) = ix.find(t) { let p = ix.postings(tt); let sc = p.scale(); let df = ix.postings(tt).count(); if let Some(x) = ix.postings(tt).find(|x| x.doc == doc) { let v = x.impact as f64 * sc as f64 * ix.scale() as f64; total += v; line.push_str(&format!(" {t}(df{df})={v:.2}")); } } }
            println!("{line}  total {total:.2}");
        }
        return;
    }
    let single: Vec<FieldTexts> = fields.iter().map(|f| { let mut g = FieldTexts::default(); g.texts[1] = f.texts.iter().flatten().cloned().collect(); g }).collect();
    if keep.iter().any(|k| k == "single") {
        let mut e1 = flat; e1.k1 = 1.5;
        let mut e2 = e1; e2.tokenizer.identifiers = false;
        let mut e3 = e2; e3.tokenizer.stop_words = false;
        let mut e4 = e1; e4.tokenizer.stop_words = false;
        for (name, w) in [("single", flat), ("single k1.5", e1), ("single k1.5 noident", e2), ("single k1.5 noident nostop", e3), ("single k1.5 nostop", e4)] {
            let built = build_fields_with(&single, &buckets, &w).unwrap();
            let ix = Index::new(&built.bytes).unwrap();
            let mut tok = Tokenizer::with_options(w.tokenizer);
            let mut r5 = 0;
            for (q, rel) in &qs { let t = query_terms(&ix, &mut tok, q); let h = search(&ix, &t, 10, |_| true); if h.iter().take(5).any(|h| rel.iter().any(|r| r == names[h.doc as usize])) { r5 += 1 } }
            println!("{name} R@5 {:.1}", r5 as f64 * 100.0 / qs.len() as f64);
        }
    }
    for (name, w) in configs {
        if !keep.is_empty() && !keep.contains(&name) { continue; }
        let built = build_fields_with(&fields, &buckets, &w).unwrap();
        let ix = Index::new(&built.bytes).unwrap();
        let mut tok = Tokenizer::with_options(w.tokenizer);
        let (mut r1, mut r5, mut r10) = (0, 0, 0);
        for (q, rel) in &qs {
            let t = query_terms(&ix, &mut tok, q);
            let h = search(&ix, &t, 10, |_| true);
            let pos = h.iter().position(|h| rel.iter().any(|r| r == names[h.doc as usize]));
            if std::env::var("TIES").is_ok() { let mut sc: Vec<u32> = h.iter().take(6).map(|h| h.score.to_bits()).collect(); let n0 = sc.len(); sc.dedup(); if sc.len() < n0 { TIES_N.fetch_add(1, std::sync::atomic::Ordering::Relaxed); } }
            if pos.is_some_and(|p| p < 1) { r1 += 1 } if pos.is_some_and(|p| p < 5) { r5 += 1 } if pos.is_some() { r10 += 1 }
        }
        if std::env::var("DUMP").is_ok() {
            let mut out = String::new();
            for (q, _) in &qs { let t = query_terms(&ix, &mut tok, q); let h = search(&ix, &t, 10, |_| true); out.push_str(&serde_json::to_string(&h.iter().map(|h| names[h.doc as usize]).collect::<Vec<_>>()).unwrap()); out.push('\n'); }
            std::fs::write(format!("/tmp/ours-{name}.jsonl"), out).unwrap();
        }
        let n = qs.len() as f64 / 100.0;
        if std::env::var("TIES").is_ok() { println!("queries with ties in top 6: {}", TIES_N.swap(0, std::sync::atomic::Ordering::Relaxed)); }
        println!("{name:12} R@1 {:.1} R@5 {:.1} R@10 {:.1}", r1 as f64 / n, r5 as f64 / n, r10 as f64 / n);
    }
}
