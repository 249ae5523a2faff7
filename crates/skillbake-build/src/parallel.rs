//! Work on every available core, keeping the order of the items: the packs of a check, of a
//! generation and of the cache are independent of each other.

/// Worker threads for `items` items: every available core, one thread per 16 items at most.
fn workers(items: usize) -> usize {
    cores().min(items / 16).max(1)
}

/// The available cores, asked once per process: the standard library reads the cgroup files
/// on every call, which was a thirtieth of `check` over many single-pack folders.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `items.iter().map(f)` on every available core, keeping the order.
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    par_parts(items, |part| part.iter().map(&f).collect())
}

/// `f` over `items` cut into one run of neighbouring items per worker, the runs' results joined
/// in order: for work that sets something up once and reuses it over many items (a tokenizer
/// and its word cache). `f` must give one result per item of its run.
pub(crate) fn par_parts<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let workers = workers(items.len());
    if workers == 1 {
        return f(items);
    }
    let chunk = items.len().div_ceil(workers);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || f(part)))
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for h in handles {
            // A worker only panics on a bug; re-raise it here rather than lose items.
            out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
}

/// `items.into_iter().map(f)` on every available core, keeping the order.
pub(crate) fn par_map_owned<T: Send, R: Send>(
    mut items: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let workers = workers(items.len());
    if workers == 1 {
        return items.into_iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(workers);
    let mut parts = Vec::new();
    while items.len() > chunk {
        let tail = items.split_off(items.len() - chunk);
        parts.push(tail);
    }
    parts.push(items);
    parts.reverse();
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| scope.spawn(move || part.into_iter().map(f).collect::<Vec<_>>()))
            .collect();
        let mut out = Vec::new();
        for h in handles {
            out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part is a run of neighbouring items, and the results come back in the items'
    /// order, one per item, however many workers there are.
    #[test]
    fn parts_are_runs_and_results_keep_the_items_order() {
        for n in [0usize, 1, 15, 16, 33, 1000] {
            let items: Vec<usize> = (0..n).collect();
            let doubled = par_parts(&items, |part| part.iter().map(|x| x * 2).collect());
            assert_eq!(doubled, items.iter().map(|x| x * 2).collect::<Vec<_>>());
            // Every item tagged with the first item of its part: runs that never go back.
            let firsts = par_parts(&items, |part| {
                let first = part.first().copied().unwrap_or(0);
                vec![first; part.len()]
            });
            assert_eq!(firsts.len(), n);
            assert!(firsts.windows(2).all(|w| w[0] <= w[1]));
            assert!(firsts.iter().zip(&items).all(|(f, i)| f <= i));
            assert_eq!(
                par_map(&items, |x| x + 1),
                items.iter().map(|x| x + 1).collect::<Vec<_>>()
            );
        }
    }
}
