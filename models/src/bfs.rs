//! Breadth-first search with symmetry reduction, level by level on a
//! fixed number of threads: shortest counterexamples at depth-first speed.
//! The same search also runs depth first ([`Builder::depth_first`]): the
//! same states, visited with one stack per thread instead of whole levels
//! in memory, for the largest bounds (models/README.md, "How a state stays
//! cheap").
//!
//! Stateright 0.31 applies symmetry only in DFS, and its BFS keeps the
//! whole action path of every queued state. This search visits the
//! quotient of the state space under the representative function (as
//! stateright's DFS does) and stores per visited representative only its
//! fingerprint and its parent's. Each level is finished before the next
//! starts, so the first level on which a property is discovered is the
//! length of its shortest counterexample: with the state space closed
//! under renaming (what makes the reduction sound, see
//! `election::representative`), a path in the quotient lifts to a real path
//! of the same length and back. The path is rebuilt on the real states:
//! from the initial state, each step takes an action whose successor has
//! the next fingerprint on the parent chain.
//!
//! With one thread the search is deterministic. With more, which of two
//! equivalent states found on one level is kept may vary, so a path may
//! differ between runs but never in length; the counts never vary.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use stateright::{Checker, Expectation, HasDiscoveries, Model, Path};

/// A state's identity in the search: a 64-bit hash of its representative.
pub type Fingerprint = u64;

/// A symmetry reduction as the fingerprint of a state's representative
/// (equal for two states exactly when their representatives are equal, up
/// to 64-bit collisions): hashing the representative without building it
/// spares a copy of every generated state.
pub type Canonical<M> = fn(&<M as Model>::State) -> Fingerprint;

/// A level's unit of work: states with their fingerprints.
type Chunk<M> = Vec<(<M as Model>::State, Fingerprint)>;

/// A chunk's successors with the discoveries among them.
type Expanded<M> = (Chunk<M>, Vec<(usize, Fingerprint)>);

/// How [`SymmetricBfs`] runs; `SymmetricBfs::builder(model)` starts one.
pub struct Builder<M: Model> {
    model: M,
    threads: usize,
    symmetry: Option<Canonical<M>>,
    finish_when: HasDiscoveries,
    target_state_count: Option<usize>,
    depth_first: bool,
}

impl<M> Builder<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + Hash + Send + Sync + 'static,
    M::Action: Clone,
{
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Visit one state per class of a representative function, given as
    /// `canonical`, the fingerprint of a state's representative (see the
    /// module docs for when that is sound; the election model's is
    /// `election::canonical_fingerprint`).
    pub fn symmetry_fn(mut self, canonical: Canonical<M>) -> Self {
        self.symmetry = Some(canonical);
        self
    }

    /// Stop once these properties have discoveries (default: all of them).
    pub fn finish_when(mut self, when: HasDiscoveries) -> Self {
        self.finish_when = when;
        self
    }

    /// Stop after about this many generated states.
    pub fn target_state_count(mut self, count: usize) -> Self {
        self.target_state_count = Some(count);
        self
    }

    /// Search depth first: each thread follows one path down its own stack
    /// and hands half of it to a thread that ran out of work. It visits the
    /// same states (one per class of the representative function) but
    /// keeps only the stacks in memory, not a whole level; a discovery's
    /// path is the one the search took, not the shortest.
    pub fn depth_first(mut self) -> Self {
        self.depth_first = true;
        self
    }

    /// Starts the search on its own thread.
    pub fn spawn(self) -> SymmetricBfs<M> {
        let model = Arc::new(self.model);
        // Depth first, a discovery's path is the finding thread's own trail
        // (`dive`): the visited set needs no parents, half the memory.
        let shared = Arc::new(Shared { visited: Visited::new(!self.depth_first), ..Shared::default() });
        let search = Search {
            model: Arc::clone(&model),
            shared: Arc::clone(&shared),
            threads: self.threads,
            symmetry: self.symmetry,
            finish_when: self.finish_when,
            target: self.target_state_count.unwrap_or(usize::MAX),
            depth_first: self.depth_first,
        };
        let handle = std::thread::Builder::new()
            .name("bfs".into())
            .spawn(move || {
                // A panic of the checked code (the core inside the model)
                // ends the search too: the caller, waiting for `done`, then
                // joins the thread and sees the panic instead of hanging.
                let _done = DoneOnDrop(Arc::clone(&search.shared));
                search.run()
            })
            .expect("spawn the search thread");
        SymmetricBfs { model, shared, symmetry: self.symmetry, handle: Some(handle) }
    }
}

/// Marks the search done when the search thread ends, however it ends.
struct DoneOnDrop(Arc<Shared>);

impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        self.0.done.store(true, Ordering::Release);
    }
}

/// A running or finished search (stateright's [`Checker`] interface).
pub struct SymmetricBfs<M: Model> {
    model: Arc<M>,
    shared: Arc<Shared>,
    symmetry: Option<Canonical<M>>,
    handle: Option<JoinHandle<()>>,
}

impl<M> SymmetricBfs<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + Hash + Send + Sync + 'static,
    M::Action: Clone,
{
    /// Ends the search soon: each thread finishes the state in hand and
    /// stops, and the search is then done with the states explored so far
    /// (`neli-lab check --memory-limit` stops it this way).
    pub fn stop(&self) {
        self.shared.halt.store(true, Ordering::Relaxed);
    }

    pub fn builder(model: M) -> Builder<M> {
        Builder {
            model,
            threads: 1,
            symmetry: None,
            finish_when: HasDiscoveries::All,
            target_state_count: None,
            depth_first: false,
        }
    }
}

/// Counters and results the search threads share with the caller.
#[derive(Default)]
struct Shared {
    states: AtomicUsize,
    unique: AtomicUsize,
    depth: AtomicUsize,
    done: AtomicBool,
    /// Asked to stop early ([`SymmetricBfs::stop`]).
    halt: AtomicBool,
    visited: Visited,
    /// Per property: the first state that discovered it, as the chain of
    /// fingerprints from an initial state to it (depth first), or as its
    /// own fingerprint alone, the rest found through the parents (breadth first).
    discoveries: Mutex<BTreeMap<&'static str, Vec<Fingerprint>>>,
    /// Bit p: property p has a recorded discovery, so no state needs to be
    /// judged by it again (a `sometimes` property such as "a leader is
    /// elected" holds in most states).
    discovered: AtomicU64,
}

/// Visited fingerprints with their parent's (0 for an initial state), in
/// shards so that threads rarely wait for each other.
struct Visited {
    shards: Vec<Shard>,
}

/// A shard on cache lines of its own: threads locking two neighbouring
/// shards would otherwise keep taking one line from each other.
#[derive(Default)]
#[repr(align(128))]
struct Shard(Mutex<Table>);

const SHARDS: usize = 64;

impl Default for Visited {
    fn default() -> Self {
        Visited::new(true)
    }
}

impl Visited {
    /// A visited set that keeps each state's parent (`parents`), or only
    /// its fingerprint.
    fn new(parents: bool) -> Self {
        let table = || Shard(Mutex::new(Table { parents, ..Table::default() }));
        Visited { shards: (0..SHARDS).map(|_| table()).collect() }
    }

    fn shard(&self, fp: Fingerprint) -> &Mutex<Table> {
        &self.shards[(fp >> 58) as usize % SHARDS].0
    }

    /// Records `fp` as reached from `parent`; false if it was known.
    fn insert(&self, fp: Fingerprint, parent: Fingerprint) -> bool {
        self.shard(fp).lock().expect("visited lock").insert(fp, parent)
    }

    fn parent(&self, fp: Fingerprint) -> Option<Fingerprint> {
        self.shard(fp).lock().expect("visited lock").get(fp)
    }
}

/// An open-addressing table of fingerprints, each with its parent's if
/// `parents`, with linear probing; 0 marks an empty slot (no fingerprint
/// is 0, see [`fingerprint`]). Fingerprints are already hashes, so their
/// low bits pick the slot (the shard is picked by the top bits). A lookup
/// mostly reads one cache line, where a general-purpose map reads its
/// control bytes and then its entries: the visited set is the search's
/// largest structure, and looking states up in it its largest cost
/// (docs/benchmarks-log.md, "Model checker"). Without parents a state
/// takes 8 bytes instead of 16.
#[derive(Default)]
struct Table {
    /// Slot `i` is `words[w * i]` (its fingerprint) and, with parents,
    /// `words[w * i + 1]` (its parent's), `w` being [`Table::width`].
    words: Vec<u64>,
    len: usize,
    parents: bool,
}

impl Table {
    fn width(&self) -> usize {
        if self.parents { 2 } else { 1 }
    }

    fn capacity(&self) -> usize {
        self.words.len() / self.width()
    }

    fn insert(&mut self, fp: Fingerprint, parent: Fingerprint) -> bool {
        // At most 3/4 full, so that probe runs stay short.
        if 4 * (self.len + 1) > 3 * self.capacity() {
            self.grow();
        }
        let (w, mask) = (self.width(), self.capacity() - 1);
        let mut i = fp as usize & mask;
        loop {
            match self.words[w * i] {
                0 => {
                    self.words[w * i] = fp;
                    if self.parents {
                        self.words[w * i + 1] = parent;
                    }
                    self.len += 1;
                    return true;
                }
                known if known == fp => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The parent of `fp`, if `fp` is known and parents are kept.
    fn get(&self, fp: Fingerprint) -> Option<Fingerprint> {
        if self.words.is_empty() || !self.parents {
            return None;
        }
        let mask = self.capacity() - 1;
        let mut i = fp as usize & mask;
        loop {
            match self.words[2 * i] {
                0 => return None,
                known if known == fp => return Some(self.words[2 * i + 1]),
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let (w, size) = (self.width(), (self.capacity() * 2).max(1024));
        let old = std::mem::replace(&mut self.words, vec![0; w * size]);
        self.len = 0;
        for slot in old.chunks_exact(w).filter(|slot| slot[0] != 0) {
            self.insert(slot[0], slot.get(1).copied().unwrap_or(0));
        }
    }
}

/// The fingerprint of `state` (of its representative with symmetry).
fn fingerprint<S: Hash>(state: &S, symmetry: Option<fn(&S) -> Fingerprint>) -> Fingerprint {
    // Fixed keys: the same state has the same fingerprint in every run.
    let hasher = ahash::RandomState::with_seeds(0x6e65_6c69, 0x6266_7321, 0x5eed, 0x0bad_cafe);
    let fp = match symmetry {
        Some(canonical) => canonical(state),
        None => hasher.hash_one(state),
    };
    fp.max(1) // 0 marks "no parent"
}

struct Search<M: Model> {
    model: Arc<M>,
    shared: Arc<Shared>,
    threads: usize,
    symmetry: Option<Canonical<M>>,
    finish_when: HasDiscoveries,
    target: usize,
    depth_first: bool,
}

/// A depth-first thread's counts not yet added to [`Shared`]'s.
#[derive(Default)]
struct Counts {
    states: usize,
    unique: usize,
    depth: usize,
}

/// Generated states a depth-first thread counts before it adds them to
/// the shared counts (the progress line and `--max-states` read those).
const FLUSH_EVERY: usize = 4096;

impl Counts {
    fn flush(&mut self, sh: &Shared) {
        if self.states == 0 {
            return;
        }
        sh.states.fetch_add(self.states, Ordering::Relaxed);
        sh.unique.fetch_add(self.unique, Ordering::Relaxed);
        sh.depth.fetch_max(self.depth, Ordering::Relaxed);
        *self = Counts::default();
    }
}

/// Work a busy depth-first thread hands to an idle one: states with their
/// depths, and the busy thread's trail, which holds their ancestors.
struct Handoff<S> {
    states: Vec<(S, Fingerprint, usize)>,
    trail: Vec<Fingerprint>,
}

/// An idle depth-first thread takes the handed-over work onto its empty
/// `stack`, with the trail above it: `Some` to go on, `None` once every
/// thread is idle with nothing handed over (the search is over).
fn take_work<S>(
    pool: &Mutex<Handoff<S>>,
    stack: &mut Vec<(S, Fingerprint, usize)>,
    trail: &mut Vec<Fingerprint>,
    idle: &AtomicUsize,
    waiting: &mut bool,
    threads: usize,
) -> Option<()> {
    let mut p = pool.lock().expect("pool lock");
    if p.states.is_empty() {
        drop(p);
        if !*waiting {
            *waiting = true;
            idle.fetch_add(1, Ordering::SeqCst);
        }
        // Only a busy thread adds work: with none busy and the pool
        // empty, the search is over.
        if idle.load(Ordering::SeqCst) == threads {
            return None;
        }
        std::thread::yield_now();
        return Some(());
    }
    if *waiting {
        *waiting = false;
        idle.fetch_sub(1, Ordering::SeqCst);
    }
    stack.append(&mut p.states);
    trail.clone_from(&p.trail);
    Some(())
}

/// States per unit of work handed to a thread.
const CHUNK: usize = 512;

impl<M> Search<M>
where
    M: Model + Send + Sync,
    M::State: Clone + Hash + Send + Sync,
    M::Action: Clone,
{
    fn run(self) {
        let sh = &self.shared;
        let properties = self.model.properties();
        let mut first: Vec<(M::State, Fingerprint)> = Vec::new();
        let mut found = Vec::new();
        for s in self.model.init_states() {
            if !self.model.within_boundary(&s) {
                continue;
            }
            let fp = fingerprint(&s, self.symmetry);
            sh.states.fetch_add(1, Ordering::Relaxed);
            if sh.visited.insert(fp, 0) {
                sh.unique.fetch_add(1, Ordering::Relaxed);
                self.judge(&properties, &s, fp, &mut found);
                first.push((s, fp));
            }
        }
        if self.depth_first {
            sh.depth.store(1, Ordering::Relaxed);
            if self.record(&properties, found, &[]) {
                self.dive(first, &properties);
            }
            sh.done.store(true, Ordering::Release);
            return;
        }
        let mut level = vec![first];
        let mut depth = 1;
        sh.depth.store(depth, Ordering::Relaxed);
        // Level `depth` is judged (every property on every state) before it
        // is expanded, so the first level with a discovery is its shortest
        // length; the first discovery in level order is kept.
        while self.record(&properties, found, &[]) && level.iter().any(|chunk| !chunk.is_empty()) {
            let results = self.expand(level, &properties);
            found = results.iter().flat_map(|(_, f)| f.iter().copied()).collect();
            level = results.into_iter().map(|(next, _)| next).collect();
            if level.iter().any(|chunk| !chunk.is_empty()) {
                depth += 1;
                sh.depth.store(depth, Ordering::Relaxed);
            }
        }
        sh.done.store(true, Ordering::Release);
    }

    /// Depth first from `roots` on the search's threads, until every
    /// state is expanded, a discovery ends the search or the target count
    /// is reached. Work moves only to a thread that has none: a busy thread
    /// hands over the older half of its stack (states nearer the roots,
    /// with the most below them) when it sees one idle.
    fn dive(&self, roots: Chunk<M>, properties: &[stateright::Property<M>]) {
        let sh = &self.shared;
        let roots = roots.into_iter().map(|(s, fp)| (s, fp, 1)).collect();
        let pool = Mutex::new(Handoff::<M::State> { states: roots, trail: Vec::new() });
        let (idle, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
        let threads = self.threads.max(1);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    let (mut stack, mut actions, mut found) = (Vec::new(), Vec::new(), Vec::new());
                    // The fingerprints from an initial state down to the
                    // state in hand: a discovery's path. The stack is sorted
                    // by depth, so a state on it keeps its ancestors here
                    // until it is popped.
                    let mut trail: Vec<Fingerprint> = Vec::new();
                    let mut waiting = false;
                    // Counters kept here and added to the shared ones now
                    // and then: two threads bumping one cache line on every
                    // state cost more than a tenth of the search.
                    let mut counts = Counts::default();
                    while !stop.load(Ordering::Relaxed) {
                        let Some((s, fp, depth)) = stack.pop() else {
                            counts.flush(sh);
                            match take_work(&pool, &mut stack, &mut trail, &idle, &mut waiting, threads) {
                                Some(()) => continue,
                                None => break,
                            }
                        };
                        trail.truncate(depth - 1);
                        trail.push(fp);
                        let before = stack.len();
                        counts.states += self.successors(&s, fp, properties, &mut actions, &mut found, |n, nfp| {
                            stack.push((n, nfp, depth + 1));
                        });
                        if stack.len() > before {
                            counts.unique += stack.len() - before;
                            counts.depth = counts.depth.max(depth + 1);
                        }
                        if counts.states >= FLUSH_EVERY {
                            counts.flush(sh);
                        }
                        let more = found.is_empty() || {
                            counts.flush(sh);
                            self.record(properties, std::mem::take(&mut found), &trail)
                        };
                        if !more
                            || sh.states.load(Ordering::Relaxed) + counts.states >= self.target
                            || sh.halt.load(Ordering::Relaxed)
                        {
                            counts.flush(sh);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                        if idle.load(Ordering::Relaxed) > 0 && stack.len() >= 2 {
                            let mut p = pool.lock().expect("pool lock");
                            if p.states.is_empty() {
                                p.states.extend(stack.drain(..stack.len() / 2));
                                p.trail.clone_from(&trail);
                            }
                        }
                    }
                    // Also when another thread stopped the search.
                    counts.flush(sh);
                });
            }
        });
    }

    /// Generates the successors of `s` (fingerprint `fp`) within the
    /// boundary; each not visited before is recorded with `fp` as its
    /// parent, judged, and handed to `keep`. Returns how many were generated.
    fn successors(
        &self,
        s: &M::State,
        fp: Fingerprint,
        properties: &[stateright::Property<M>],
        actions: &mut Vec<M::Action>,
        found: &mut Vec<(usize, Fingerprint)>,
        mut keep: impl FnMut(M::State, Fingerprint),
    ) -> usize {
        let mut generated = 0;
        self.model.actions(s, actions);
        for a in actions.drain(..) {
            let Some(n) = self.model.next_state(s, a) else { continue };
            if !self.model.within_boundary(&n) {
                continue;
            }
            generated += 1;
            let nfp = fingerprint(&n, self.symmetry);
            if self.shared.visited.insert(nfp, fp) {
                self.judge(properties, &n, nfp, found);
                keep(n, nfp);
            }
        }
        generated
    }

    /// Adds the properties `s` discovers to `found` (first one kept).
    fn judge(
        &self,
        properties: &[stateright::Property<M>],
        s: &M::State,
        fp: Fingerprint,
        found: &mut Vec<(usize, Fingerprint)>,
    ) {
        let discovered = self.shared.discovered.load(Ordering::Relaxed);
        for (p, property) in properties.iter().enumerate() {
            if p < 64 && discovered & (1 << p) != 0 {
                continue;
            }
            let hit = match property.expectation {
                Expectation::Always => !(property.condition)(&self.model, s),
                Expectation::Sometimes => (property.condition)(&self.model, s),
                // Not checked by this search (the election model has none).
                Expectation::Eventually => false,
            };
            if hit && !found.iter().any(|(q, _)| *q == p) {
                found.push((p, fp));
            }
        }
    }

    /// Records discoveries, each found in a successor of the last state of
    /// `trail` (depth first) or with an empty trail (breadth first, and the
    /// initial states); false once the search should stop.
    fn record(
        &self,
        properties: &[stateright::Property<M>],
        found: Vec<(usize, Fingerprint)>,
        trail: &[Fingerprint],
    ) -> bool {
        let sh = &self.shared;
        let mut discoveries = sh.discoveries.lock().expect("discoveries lock");
        for (p, fp) in found {
            discoveries.entry(properties[p].name).or_insert_with(|| trail.iter().copied().chain([fp]).collect());
            if p < 64 {
                sh.discovered.fetch_or(1 << p, Ordering::Relaxed);
            }
        }
        let names: BTreeSet<&'static str> = discoveries.keys().copied().collect();
        !self.finish_when.matches(&names, properties)
            && sh.states.load(Ordering::Relaxed) < self.target
            && !sh.halt.load(Ordering::Relaxed)
    }

    /// The next level, chunk by chunk on the search's threads, each chunk
    /// with the discoveries among its states; the results come back in
    /// chunk order. Each thread drops the chunks it expanded.
    fn expand(&self, level: Vec<Chunk<M>>, properties: &[stateright::Property<M>]) -> Vec<Expanded<M>> {
        let sh = &self.shared;
        let chunks: Vec<Mutex<Chunk<M>>> = level.into_iter().map(Mutex::new).collect();
        let next = AtomicUsize::new(0);
        let results: Vec<Mutex<Expanded<M>>> = chunks.iter().map(|_| Mutex::default()).collect();
        std::thread::scope(|scope| {
            for _ in 0..self.threads.min(chunks.len()).max(1) {
                scope.spawn(|| {
                    let mut actions = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else { break };
                        let chunk = std::mem::take(&mut *chunk.lock().expect("chunk lock"));
                        let (mut states, mut found) = (Vec::with_capacity(2 * chunk.len()), Vec::new());
                        // Counted per state expanded, not per state
                        // generated: the threads share the counters.
                        for (s, fp) in chunk {
                            if sh.states.load(Ordering::Relaxed) >= self.target || sh.halt.load(Ordering::Relaxed) {
                                break;
                            }
                            let unique = states.len();
                            let generated = self.successors(&s, fp, properties, &mut actions, &mut found, |n, nfp| {
                                states.push((n, nfp));
                            });
                            sh.states.fetch_add(generated, Ordering::Relaxed);
                            sh.unique.fetch_add(states.len() - unique, Ordering::Relaxed);
                        }
                        // Work units of about CHUNK states for the next level.
                        *results[i].lock().expect("result lock") = (states, found);
                    }
                });
            }
        });
        let mut out = Vec::new();
        for r in results {
            let (states, found) = r.into_inner().expect("result lock");
            if states.len() <= 2 * CHUNK {
                out.push((states, found));
                continue;
            }
            // Each state moves once (splitting off the tail again and
            // again would copy the rest of a large result every time).
            let mut found = Some(found);
            let mut rest = states.into_iter().peekable();
            while rest.peek().is_some() {
                out.push((rest.by_ref().take(CHUNK).collect(), found.take().unwrap_or_default()));
            }
        }
        out
    }
}

impl<M> SymmetricBfs<M>
where
    M: Model,
    M::State: Clone + Hash + PartialEq,
    M::Action: Clone + PartialEq,
{
    /// The real path along `chain`, the fingerprints from an initial state
    /// to a discovery (a lone fingerprint is completed by its parents):
    /// from the initial state, one action per step whose successor has the
    /// chain's next fingerprint.
    fn path_to(&self, mut chain: Vec<Fingerprint>) -> Option<Path<M::State, M::Action>> {
        if chain.len() == 1 {
            while let Some(parent) = self.shared.visited.parent(*chain.last()?) {
                if parent == 0 {
                    break;
                }
                chain.push(parent);
            }
            chain.reverse();
        }
        let init = self.model.init_states().into_iter().find(|s| fingerprint(s, self.symmetry) == chain[0])?;
        let (mut state, mut actions, mut enabled) = (init.clone(), Vec::new(), Vec::new());
        for want in &chain[1..] {
            enabled.clear();
            self.model.actions(&state, &mut enabled);
            let (action, next) = enabled.drain(..).find_map(|a| {
                let n = self.model.next_state(&state, a.clone())?;
                (fingerprint(&n, self.symmetry) == *want).then_some((a, n))
            })?;
            actions.push(action);
            state = next;
        }
        Path::from_actions(&*self.model, init, &actions)
    }
}

impl<M> Checker<M> for SymmetricBfs<M>
where
    M: Model,
    M::State: Clone + Hash,
    M::Action: Clone,
{
    fn model(&self) -> &M {
        &self.model
    }

    fn state_count(&self) -> usize {
        self.shared.states.load(Ordering::Relaxed)
    }

    fn unique_state_count(&self) -> usize {
        self.shared.unique.load(Ordering::Relaxed)
    }

    fn max_depth(&self) -> usize {
        self.shared.depth.load(Ordering::Relaxed)
    }

    fn discoveries(&self) -> HashMap<&'static str, Path<M::State, M::Action>>
    where
        M::State: PartialEq,
        M::Action: PartialEq,
    {
        let found = self.shared.discoveries.lock().expect("discoveries lock").clone();
        found.into_iter().filter_map(|(name, chain)| Some((name, self.path_to(chain)?))).collect()
    }

    fn handles(&mut self) -> Vec<JoinHandle<()>> {
        self.handle.take().into_iter().collect()
    }

    fn is_done(&self) -> bool {
        self.shared.done.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn the_table_keeps_each_fingerprint_once_with_its_first_parent_across_growth() {
        let mut t = Table { parents: true, ..Table::default() };
        // Spread like hashes, and some sharing their low bits (one probe run).
        let fps: Vec<u64> =
            (1..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1).chain((1..50).map(|i| i << 40)).collect();
        for (k, fp) in fps.iter().enumerate() {
            assert!(t.insert(*fp, k as u64), "{fp:#x} is new");
        }
        for (k, fp) in fps.iter().enumerate() {
            assert!(!t.insert(*fp, 7), "{fp:#x} is known");
            assert_eq!(t.get(*fp), Some(k as u64), "{fp:#x} keeps its first parent");
        }
        assert_eq!(t.len, fps.len());
        assert_eq!(t.get(2), None);
        assert_eq!(Table::default().get(5), None);
    }

    #[test]
    fn without_parents_the_table_keeps_each_fingerprint_once_in_half_the_words() {
        let (mut with, mut without) = (Table { parents: true, ..Table::default() }, Table::default());
        let fps: Vec<u64> = (1..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1).collect();
        for fp in &fps {
            assert!(with.insert(*fp, 9) && without.insert(*fp, 9), "{fp:#x} is new");
        }
        for fp in &fps {
            assert!(!without.insert(*fp, 7), "{fp:#x} is known");
            assert_eq!(without.get(*fp), None, "no parent kept");
        }
        assert_eq!((without.len, without.capacity()), (with.len, with.capacity()));
        assert_eq!(2 * without.words.len(), with.words.len());
    }
}
