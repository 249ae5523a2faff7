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
    let workers = workers(items.len());
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(workers);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(f).collect::<Vec<_>>()))
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
