//! The remote layer of the code cache (spec/backends.md, "A remote code cache"): a store
//! shared by many machines ([`irkit_store::Remote`]) behind the local directory, or alone.
//! Before any function is compiled, the build asks for the records of all its groups at once
//! and for the blobs of the groups holding functions the directory lacks, in parallel
//! ([`RemoteLayer::prefetch`]); the entries fetched are then taken as the directory's are,
//! each through every check an entry file passes ([`super::CodeCache::get`]). After the
//! build, each group whose record does not list exactly the build's entries gets a new blob
//! and then a new record ([`RemoteLayer::upload`]), so a record only names a blob that was
//! stored.
//!
//! Nothing fetched is trusted because it exists: a record is used only if it parses and its
//! tag is the reader's ([`super::record`]), a blob only if its length and SHA-256 are the
//! record's, and each entry in it is decoded and checked against its key and checksum when
//! taken. A store that is down, slow or faulty costs what could not be fetched: the faults
//! are counted with the first one ([`irkit_store::Counts`]), never raised.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use irkit_store::{Kind, Remote};

use super::record::{MAX_BLOB, MAX_RECORD, Record, group_name, groups};

/// The most bytes of blobs one build fetches (the groups past it are compiled).
const MAX_FETCH: u64 = 1 << 31;
use crate::fingerprint::Key;

/// One group of the build: its record's name, the build's keys in it (in module order, each
/// once), the record found in the store, if a valid one was, and whether the blob it names
/// was asked for and not had (missing, or not the one the record names: written again).
#[derive(Debug)]
struct Group {
    name: String,
    keys: Vec<Key>,
    found: Option<Record>,
    broken: bool,
}

/// A remote store in use by one build.
#[derive(Debug)]
pub(crate) struct RemoteLayer {
    store: Remote,
    /// The key records are tagged with (`super::record::tag_key`, or zeros).
    tag: [u8; 32],
    /// The build's groups, once prefetched.
    groups: OnceLock<Vec<Group>>,
    /// Entries fetched, by key (checked when taken).
    fetched: OnceLock<HashMap<Key, Vec<u8>>>,
    /// Keys taken from `fetched`, for the directory.
    taken: Mutex<Vec<Key>>,
    /// Records and blobs fetched but not used: a record that does not parse or whose tag is
    /// not the reader's, a blob that is not the one its record names.
    pub(crate) refused: AtomicUsize,
    /// Records written.
    pub(crate) records_written: AtomicUsize,
}

/// A remote store for the code cache (spec/backends.md, "A remote code cache").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteOptions {
    /// The store: `http(s)://HOST[:PORT][/PREFIX]` (the Bazel HTTP cache protocol) or
    /// `redis://HOST[:PORT][/DB]`.
    pub url: String,
    /// The bytes of the key file records are authenticated with (`--cache-key FILE`); `None`:
    /// records carry an unkeyed tag, and anyone who can write to the store can give every
    /// reader code to run.
    pub key: Option<Vec<u8>>,
    /// The timeouts and the requests in flight.
    pub policy: irkit_store::Policy,
}

/// What a build did with its remote store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// The store's URL.
    pub url: String,
    /// Function bodies taken from entries fetched from the store.
    pub fetched: usize,
    /// Records and blobs fetched but refused (a bad tag, a blob that is not its record's).
    pub refused: usize,
    /// Records written (one per group whose record did not list the build's entries).
    pub records_written: usize,
    /// Requests, bytes and faults.
    pub counts: irkit_store::Counts,
}

impl RemoteLayer {
    /// The layer of the store `opts` names.
    pub(crate) fn open(opts: &RemoteOptions) -> Result<RemoteLayer, irkit_store::StoreError> {
        let store = Remote::open(&opts.url, opts.policy.clone())?;
        let tag = opts.key.as_deref().map_or([0; 32], super::record::tag_key);
        Ok(RemoteLayer::new(store, tag))
    }

    /// The layer over `store`, records tagged with `tag`.
    pub(crate) fn new(store: Remote, tag: [u8; 32]) -> RemoteLayer {
        RemoteLayer {
            store,
            tag,
            groups: OnceLock::new(),
            fetched: OnceLock::new(),
            taken: Mutex::new(Vec::new()),
            refused: AtomicUsize::new(0),
            records_written: AtomicUsize::new(0),
        }
    }

    /// Fetches what the build of `functions` (each function's name and key, in module order;
    /// keys under target `prefix`) may take from the store: every group's record (one
    /// request each, in parallel), then the blobs of the groups with a key `local` lacks.
    pub(crate) fn prefetch(
        &self,
        prefix: &[u8; 32],
        functions: &[(String, Key)],
        local: impl Fn(&Key) -> bool + Sync,
    ) {
        let names: Vec<String> = functions.iter().map(|(n, _)| n.clone()).collect();
        let mut built: Vec<Group> = groups(&names)
            .into_iter()
            .map(|r| {
                let mut seen = HashSet::new();
                Group {
                    name: group_name(prefix, &names[r.clone()], &self.tag),
                    keys: functions[r]
                        .iter()
                        .map(|(_, k)| *k)
                        .filter(|k| seen.insert(*k))
                        .collect(),
                    found: None,
                    broken: false,
                }
            })
            .collect();
        let ac: Vec<(String, u64)> = built.iter().map(|g| (g.name.clone(), MAX_RECORD)).collect();
        for (g, bytes) in built.iter_mut().zip(self.store.get(Kind::Ac, &ac)) {
            let Some(bytes) = bytes else { continue };
            g.found = Record::parse(&bytes, &g.name, &self.tag);
            if g.found.is_none() {
                self.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
        // The blobs of the groups that have something the directory lacks.
        let wanted: Vec<(usize, &Record, Vec<Key>)> = built
            .iter()
            .enumerate()
            .filter_map(|(i, g)| {
                let r = g.found.as_ref()?;
                let listed: HashSet<&Key> = r.keys().collect();
                let want: Vec<Key> = g
                    .keys
                    .iter()
                    .filter(|k| listed.contains(k) && !local(k))
                    .copied()
                    .collect();
                (!want.is_empty()).then_some((i, r, want))
            })
            .collect();
        // Each blob read up to the length its record names, and at most MAX_FETCH bytes in all
        // (the groups past it are compiled).
        let mut total = 0u64;
        let wanted: Vec<_> = wanted
            .into_iter()
            .take_while(|(_, r, _)| {
                total = total.saturating_add(r.len);
                total <= MAX_FETCH
            })
            .collect();
        let cas: Vec<(String, u64)> = wanted
            .iter()
            .map(|(_, r, _)| (irkit_store::hex(&r.blob), r.len))
            .collect();
        let mut fetched = HashMap::new();
        let blobs = self.store.get(Kind::Cas, &cas);
        let mut broken = Vec::new();
        for ((i, record, want), blob) in wanted.iter().zip(blobs) {
            let Some(entries) = blob.as_deref().and_then(|b| record.split(b)) else {
                self.refused
                    .fetch_add(usize::from(blob.is_some()), Ordering::Relaxed);
                broken.push(*i);
                continue;
            };
            let want: HashSet<&Key> = want.iter().collect();
            for (k, bytes) in entries {
                if want.contains(&k) {
                    fetched.entry(k).or_insert_with(|| bytes.to_vec());
                }
            }
        }
        for i in broken {
            built[i].broken = true;
        }
        let _ = self.fetched.set(fetched);
        let _ = self.groups.set(built);
    }

    /// The fetched bytes of `key`'s entry, if any (to be checked by the caller).
    pub(crate) fn fetched(&self, key: &Key) -> Option<&[u8]> {
        self.fetched.get()?.get(key).map(Vec::as_slice)
    }

    /// Notes that the entry of `key` fetched from the store was taken.
    pub(crate) fn took(&self, key: &Key) {
        if let Ok(mut t) = self.taken.lock() {
            t.push(*key);
        }
    }

    /// The fetched entries taken, each once, with their bytes.
    pub(crate) fn taken(&self) -> Vec<(Key, &[u8])> {
        let keys = self.taken.lock().map(|t| t.clone()).unwrap_or_default();
        let mut seen = HashSet::new();
        keys.into_iter()
            .filter(|k| seen.insert(*k))
            .filter_map(|k| Some((k, self.fetched(&k)?)))
            .collect()
    }

    /// The keys of the groups whose record must be rewritten, given `have` (whether the
    /// build has an entry of a key): those whose record is missing or does not list exactly
    /// the group's keys the build has entries for.
    pub(crate) fn stale_keys(&self, have: impl Fn(&Key) -> bool) -> HashSet<Key> {
        let Some(groups) = self.groups.get() else {
            return HashSet::new();
        };
        groups
            .iter()
            .filter(|g| stale(g, &have))
            .flat_map(|g| g.keys.iter().copied().filter(|k| have(k)))
            .collect()
    }

    /// Writes a blob and then a record for each group whose record does not list the
    /// build's entries (`have`, as for [`RemoteLayer::stale_keys`]), given those entries'
    /// bytes (`bytes`, the keys [`RemoteLayer::stale_keys`] gave). A record is written only
    /// once its blob was stored.
    pub(crate) fn upload(&self, have: impl Fn(&Key) -> bool, bytes: &HashMap<Key, Vec<u8>>) {
        let Some(groups) = self.groups.get() else {
            return;
        };
        let mut blobs = Vec::new();
        let mut records = Vec::new();
        for g in groups.iter().filter(|g| stale(g, &have)) {
            let entries: Vec<(Key, &[u8])> = g
                .keys
                .iter()
                .filter_map(|k| Some((*k, bytes.get(k)?.as_slice())))
                .collect();
            let (record, blob) = Record::of(&entries);
            if blob.len() as u64 > MAX_BLOB {
                continue;
            }
            blobs.push((irkit_store::hex(&record.blob), blob));
            records.push((g.name.clone(), record.bytes(&g.name, &self.tag)));
        }
        let stored = self.store.put(Kind::Cas, &blobs);
        let records: Vec<(String, Vec<u8>)> = records
            .into_iter()
            .zip(stored)
            .filter_map(|(r, ok)| ok.then_some(r))
            .collect();
        let written = self.store.put(Kind::Ac, &records);
        let n = written.iter().filter(|&&ok| ok).count();
        self.records_written.fetch_add(n, Ordering::Relaxed);
    }

    /// What the build did with the store.
    pub(crate) fn stats(&self) -> RemoteStats {
        RemoteStats {
            url: self.store.url().to_string(),
            fetched: self.taken.lock().map_or(0, |t| t.len()),
            refused: self.refused.load(Ordering::Relaxed),
            records_written: self.records_written.load(Ordering::Relaxed),
            counts: self.store.counts(),
        }
    }
}

/// Whether group `g`'s record must be rewritten: it is missing, its blob could not be had,
/// or its keys are not the group's keys the build has entries for (`have`), in order.
fn stale(g: &Group, have: &impl Fn(&Key) -> bool) -> bool {
    let mut now = g.keys.iter().filter(|k| have(k)).peekable();
    match &g.found {
        None => now.peek().is_some(),
        Some(_) if g.broken => now.peek().is_some(),
        Some(r) => !r.keys().eq(now),
    }
}

#[cfg(test)]
mod tests {
    use crate::object::{compile_object_in_chunks, emit_object_serial};
    use crate::{CodegenOptions, RemoteOptions};
    use irkit_testgen::{Config, Entropy, module};

    /// Random modules built on machine A (a directory and the store), then on machine B (an
    /// empty directory and the store) and with the store alone: B compiles nothing, and every
    /// object is the serial build's.
    #[test]
    fn objects_from_the_store_are_the_serial_builds() {
        let Some(redis) = irkit_testkit::servers::redis(None) else {
            return;
        };
        let remote = RemoteOptions {
            url: redis.url.clone(),
            key: Some(b"k".to_vec()),
            policy: irkit_store::Policy::default(),
        };
        let cfg = Config {
            dangling_imports: false,
            generics: false,
            ..Config::default()
        };
        let mut fetched = 0;
        for seed in 0..16 {
            let mut m = module(&mut Entropy::from_seed(seed), &cfg);
            irkit_noir::lower_procs(&mut m).expect("generated procs lower");
            let serial = emit_object_serial(&m, "main").expect("compiles");
            let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
            let build = |dir: Option<&std::path::Path>| {
                let opts = CodegenOptions {
                    jobs: Some(2),
                    cache: dir.map(|d| d.to_path_buf()),
                    remote: Some(remote.clone()),
                    ..CodegenOptions::default()
                };
                compile_object_in_chunks(&m, &opts, 3).expect("compiles")
            };
            let (a, _) = build(Some(dirs[0].path()));
            let (b, s) = build(Some(dirs[1].path()));
            let (c, t) = build(None);
            assert!(a == serial && b == serial && c == serial, "seed {seed}");
            assert_eq!((s.compiled, t.compiled), (0, 0), "seed {seed}: {s:?}");
            let r = s.remote.expect("remote stats");
            assert_eq!(
                (r.fetched, r.counts.faults),
                (s.functions, 0),
                "seed {seed}"
            );
            fetched += r.fetched;
        }
        assert!(fetched > 16, "{fetched} functions fetched");
    }
}
