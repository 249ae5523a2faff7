//! Retrieval metrics over ranked lists: Recall@k (the share of requests with a right tool among
//! the first k; a set may list several equivalent right tools), MRR@10 and NDCG@10 with binary
//! gains.

use std::collections::BTreeMap;

/// A labelled request.
pub(super) struct Query {
    pub(super) id: String,
    pub(super) query: String,
    pub(super) relevant: Vec<String>,
}

/// The metrics of one system on one set.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Metrics {
    /// Recall at 1, 5 and 10.
    pub(super) recall: [f64; 3],
    pub(super) mrr: f64,
    pub(super) ndcg: f64,
}

pub(super) fn evaluate(queries: &[Query], ranked: &BTreeMap<String, Vec<String>>) -> Metrics {
    let mut m = Metrics::default();
    if queries.is_empty() {
        return m;
    }
    for q in queries {
        let list = ranked.get(&q.id).map(Vec::as_slice).unwrap_or(&[]);
        let hit = |i: usize| list.get(i).is_some_and(|n| q.relevant.contains(n));
        let first = (0..10.min(list.len())).find(|&i| hit(i));
        for (j, k) in [1usize, 5, 10].into_iter().enumerate() {
            if first.is_some_and(|f| f < k) {
                m.recall[j] += 1.0;
            }
        }
        if let Some(f) = first {
            m.mrr += 1.0 / (f as f64 + 1.0);
        }
        let dcg: f64 = (0..10.min(list.len()))
            .filter(|&i| hit(i))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let ideal: f64 = (0..q.relevant.len().min(10))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        if ideal > 0.0 {
            m.ndcg += dcg / ideal;
        }
    }
    let n = queries.len() as f64;
    for r in &mut m.recall {
        *r /= n;
    }
    m.mrr /= n;
    m.ndcg /= n;
    m
}

/// The requests whose right tool is not among the first `k`, with what came first.
pub(super) fn misses(
    queries: &[Query],
    ranked: &BTreeMap<String, Vec<String>>,
    k: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    for q in queries {
        let list = ranked.get(&q.id).map(Vec::as_slice).unwrap_or(&[]);
        if list.iter().take(k).any(|n| q.relevant.contains(n)) {
            continue;
        }
        let rank = list
            .iter()
            .position(|n| q.relevant.contains(n))
            .map_or("not in the top 10".to_string(), |r| {
                format!("rank {}", r + 1)
            });
        out.push(format!(
            "- `{}` \"{}\": expected {} ({rank}); got {}",
            q.id,
            q.query,
            q.relevant.join(" | "),
            list.iter().take(k).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_of_a_known_ranking() {
        let q = |id: &str, rel: &[&str]| Query {
            id: id.into(),
            query: String::new(),
            relevant: rel.iter().map(|s| s.to_string()).collect(),
        };
        let queries = [q("a", &["x"]), q("b", &["y"]), q("c", &["z"])];
        let mut ranked = BTreeMap::new();
        ranked.insert("a".to_string(), vec!["x".to_string()]);
        ranked.insert(
            "b".to_string(),
            vec!["p", "q", "y"].into_iter().map(String::from).collect(),
        );
        let m = evaluate(&queries, &ranked);
        assert_eq!(m.recall, [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0]);
        assert!((m.mrr - (1.0 + 1.0 / 3.0) / 3.0).abs() < 1e-12);
        assert!((m.ndcg - (1.0 + 0.5) / 3.0).abs() < 1e-12);
        assert_eq!(misses(&queries, &ranked, 1).len(), 2);
    }
}
