//! The coordinator's loop on tokio's paused clock: a store in memory that fails on
//! command ([`Mem`]), a pool of pretend sets that end when the test says ([`FakePool`]),
//! and a source that claims the lowest pending set and holds back a failed pair
//! ([`TestSource`]), as the server's does.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};

use super::*;
use crate::file::LeagueConfig;
use crate::log_place::{LogForm, LogPlace};
use crate::schedule::SetKey;
use crate::store::{cut_text, NewVersion, SetStatus, VersionRow, VersionState, Versions};

/// The lease of the store in memory.
const LEASE: Duration = Duration::from_secs(8);

#[derive(Debug)]
struct MemSet {
    key: SetKey,
    status: SetStatus,
    attempts: u32,
    /// The points of the result that counted.
    counted: Option<[u32; 2]>,
}

#[derive(Default)]
struct Inner {
    sets: Vec<MemSet>,
    /// Out of reach: every operation fails as a lost connection.
    down: bool,
    /// Every result sent, with what became of it.
    results: Vec<(Claim, Recorded)>,
    /// Every renewal asked.
    renewals: usize,
    /// When each renewal that reached the store was made.
    renewed_at: Vec<Instant>,
    /// Uploaded bots' versions, in the order added.
    versions: Vec<VersionRow>,
    /// Their archives by hash.
    archives: HashMap<String, Vec<u8>>,
}

/// A store in memory, shared between the test and the store's thread.
#[derive(Clone, Default)]
struct Mem(Arc<Mutex<Inner>>);

fn outage() -> StoreError {
    StoreError::Backend {
        place: "memory".into(),
        what: "cannot reach it".into(),
        cause: Box::new(std::io::Error::other("connection refused")),
    }
}

impl Mem {
    fn with_sets(pairs: &[(&str, &str)]) -> Mem {
        let mem = Mem::default();
        mem.inner().sets = pairs
            .iter()
            .map(|(a, b)| MemSet {
                key: SetKey {
                    round: 1,
                    a: a.to_string(),
                    b: b.to_string(),
                },
                status: SetStatus::Pending,
                attempts: 0,
                counted: None,
            })
            .collect();
        mem
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set_down(&self, down: bool) {
        self.inner().down = down;
    }

    /// Another runner claims set `id` (its lease ran out here): a new attempt.
    fn take_over(&self, id: SetId) {
        let mut inner = self.inner();
        let set = &mut inner.sets[(id - 1) as usize];
        set.status = SetStatus::Running;
        set.attempts += 1;
    }

    /// (status, attempts, counted points) of set `id`.
    fn state(&self, id: SetId) -> (SetStatus, u32, Option<[u32; 2]>) {
        let inner = self.inner();
        let s = &inner.sets[(id - 1) as usize];
        (s.status, s.attempts, s.counted)
    }

    fn results(&self) -> Vec<(Claim, Recorded)> {
        self.inner().results.clone()
    }

    /// The lowest pending set not of a pair in `except`, claimed.
    fn claim_except(
        &mut self,
        except: &[(String, String)],
    ) -> Result<Option<ClaimedSet>, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        let held = |k: &SetKey| {
            except
                .iter()
                .any(|(x, y)| (k.a == *x && k.b == *y) || (k.a == *y && k.b == *x))
        };
        for (i, s) in inner.sets.iter_mut().enumerate() {
            if s.status == SetStatus::Pending && !held(&s.key) {
                s.status = SetStatus::Running;
                s.attempts += 1;
                return Ok(Some(ClaimedSet {
                    id: i as SetId + 1,
                    key: s.key.clone(),
                    seed: i as u64,
                    attempts: s.attempts,
                }));
            }
        }
        Ok(None)
    }

    fn holds(inner: &Inner, claim: Claim) -> bool {
        let s = &inner.sets[(claim.id - 1) as usize];
        s.status == SetStatus::Running && s.attempts == claim.attempt
    }
}

impl Claims for Mem {
    fn requeue(&mut self, claims: &[Claim]) -> Result<usize, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        let mut n = 0;
        for &claim in claims {
            if Mem::holds(&inner, claim) {
                inner.sets[(claim.id - 1) as usize].status = SetStatus::Pending;
                n += 1;
            }
        }
        Ok(n)
    }

    fn set_log(&mut self, claim: Claim, _log: &LogPlace) -> Result<bool, StoreError> {
        Ok(Mem::holds(&self.inner(), claim))
    }

    fn record(&mut self, claim: Claim, outcome: &SetOutcome) -> Result<bool, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        let holds = Mem::holds(&inner, claim);
        if holds {
            let s = &mut inner.sets[(claim.id - 1) as usize];
            s.status = SetStatus::Done;
            s.counted = Some(outcome.points);
        }
        let recorded = if holds {
            Recorded::Counted
        } else {
            Recorded::Duplicate
        };
        inner.results.push((claim, recorded));
        Ok(holds)
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn lease(&self) -> Option<Duration> {
        Some(LEASE)
    }

    fn renew_claims(&mut self, held: &[Claim]) -> Result<Vec<bool>, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        inner.renewals += 1;
        inner.renewed_at.push(Instant::now());
        Ok(held.iter().map(|&c| Mem::holds(&inner, c)).collect())
    }

    fn reconnect_if_lost(&mut self) -> Result<(), StoreError> {
        if self.inner().down {
            return Err(outage());
        }
        Ok(())
    }

    fn is_outage(&self, error: &StoreError) -> bool {
        matches!(error, StoreError::Backend { place, .. } if place == "memory")
    }
}

/// Versions kept plainly in memory, as the stores keep them (times as given).
/// A version as a list gives it: without its output and detail.
fn listed(v: &VersionRow) -> VersionRow {
    VersionRow {
        output: String::new(),
        detail: String::new(),
        ..v.clone()
    }
}

impl Versions for Mem {
    fn add_version(&mut self, version: &NewVersion) -> Result<u32, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        let number = 1 + inner
            .versions
            .iter()
            .filter(|v| v.bot == version.bot)
            .map(|v| v.number)
            .max()
            .unwrap_or(0);
        inner
            .archives
            .entry(version.hash.clone())
            .or_insert_with(|| version.archive.clone());
        inner.versions.push(VersionRow {
            bot: version.bot.clone(),
            number,
            author: version.author.clone(),
            hash: version.hash.clone(),
            submitted: version.submitted.clone(),
            changed: version.submitted.clone(),
            state: VersionState::Queued,
            output: String::new(),
            detail: String::new(),
        });
        Ok(number)
    }

    fn set_version_state(
        &mut self,
        bot: &str,
        number: u32,
        state: VersionState,
        output: Option<&str>,
        detail: Option<&str>,
        now: &str,
    ) -> Result<bool, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        let Some(v) = inner
            .versions
            .iter_mut()
            .find(|v| v.bot == bot && v.number == number)
        else {
            return Ok(false);
        };
        v.state = state;
        v.changed = now.to_string();
        if let Some(output) = output {
            v.output = cut_text(output).to_string();
        }
        if let Some(detail) = detail {
            v.detail = cut_text(detail).to_string();
        }
        Ok(true)
    }

    fn activate_version(
        &mut self,
        bot: &str,
        number: u32,
        now: &str,
    ) -> Result<Option<u32>, StoreError> {
        let mut inner = self.inner();
        if inner.down {
            return Err(outage());
        }
        if !inner
            .versions
            .iter()
            .any(|v| v.bot == bot && v.number == number)
        {
            return Err(StoreError::NoVersion {
                place: "memory".into(),
                bot: bot.into(),
                number,
            });
        }
        let mut retired = None;
        for v in inner.versions.iter_mut().filter(|v| v.bot == bot) {
            if v.number == number && v.state != VersionState::Active {
                v.state = VersionState::Active;
                v.changed = now.to_string();
            } else if v.number != number && v.state == VersionState::Active {
                v.state = VersionState::Retired;
                v.changed = now.to_string();
                retired = Some(v.number);
            }
        }
        Ok(retired)
    }

    fn versions_of(&self, bot: &str) -> Result<Vec<VersionRow>, StoreError> {
        let mut of: Vec<VersionRow> = self
            .inner()
            .versions
            .iter()
            .filter(|v| v.bot == bot)
            .map(listed)
            .collect();
        of.sort_by_key(|v| v.number);
        Ok(of)
    }

    fn version(&self, bot: &str, number: u32) -> Result<Option<VersionRow>, StoreError> {
        Ok(self
            .inner()
            .versions
            .iter()
            .find(|v| v.bot == bot && v.number == number)
            .cloned())
    }

    fn versions_in(&self, states: &[VersionState]) -> Result<Vec<VersionRow>, StoreError> {
        let mut found: Vec<VersionRow> = self
            .inner()
            .versions
            .iter()
            .filter(|v| states.contains(&v.state))
            .map(listed)
            .collect();
        found.sort_by(|x, y| (&x.bot, x.number).cmp(&(&y.bot, y.number)));
        Ok(found)
    }

    fn archive(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.inner().archives.get(hash).cloned())
    }

    fn submitted_since(&self, author: &str, since: &str) -> Result<Vec<String>, StoreError> {
        let mut times: Vec<String> = self
            .inner()
            .versions
            .iter()
            .filter(|v| v.author == author && v.submitted.as_str() >= since)
            .map(|v| v.submitted.clone())
            .collect();
        times.sort();
        Ok(times)
    }
}

/// How a pretend set ends.
#[derive(Clone, Copy)]
enum Plan {
    /// Finishes after this long with these points.
    Finish(Duration, [u32; 2]),
    /// Fails after this long.
    Fail(Duration),
}

/// A pretend set's stop.
type Stop = watch::Sender<Option<&'static str>>;

/// Pretend sets on tokio tasks: each ends as its pair's plan says (by its stem), or
/// when stopped.
struct FakePool {
    running: HashMap<(SetId, u32), (ClaimedSet, Stop)>,
    tx: mpsc::UnboundedSender<(ClaimedSet, Ending)>,
    rx: mpsc::UnboundedReceiver<(ClaimedSet, Ending)>,
    plans: HashMap<String, Plan>,
    /// Every stop, with its reason: (stem, why).
    stops: Arc<Mutex<Vec<(String, &'static str)>>>,
    stopping: Option<&'static str>,
}

impl FakePool {
    fn new(plans: &[(&str, Plan)]) -> FakePool {
        let (tx, rx) = mpsc::unbounded_channel();
        FakePool {
            running: HashMap::new(),
            tx,
            rx,
            plans: plans.iter().map(|(s, p)| (s.to_string(), *p)).collect(),
            stops: Arc::default(),
            stopping: None,
        }
    }
}

impl Pool for FakePool {
    fn start(&mut self, start: Start) {
        let set = start.set;
        let plan = self
            .plans
            .get(&set.key.stem())
            .copied()
            .unwrap_or(Plan::Finish(Duration::from_secs(10), [1, 1]));
        let (stop, mut stopped) = watch::channel(self.stopping);
        let tx = self.tx.clone();
        let played = set.clone();
        tokio::spawn(async move {
            let (after, ending) = match plan {
                Plan::Finish(after, points) => (
                    after,
                    Ending::Finished(SetOutcome {
                        points,
                        ..SetOutcome::new(LogPlace::file(&played.key.stem(), LogForm::Plain))
                    }),
                ),
                Plan::Fail(after) => (
                    after,
                    Ending::Failed(SetFailure::Log("a log that cannot be written".into())),
                ),
            };
            let ending = tokio::select! {
                _ = tokio::time::sleep(after) => ending,
                _ = stopped.wait_for(|s| s.is_some()) => Ending::Stopped,
            };
            let _ = tx.send((played, ending));
        });
        self.running.insert((set.id, set.attempts), (set, stop));
    }

    fn stop(&mut self, set: &ClaimedSet, why: &'static str) {
        if let Some((_, stop)) = self.running.get(&(set.id, set.attempts)) {
            let _ = stop.send(Some(why));
            self.stops
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((set.key.stem(), why));
        }
    }

    fn stop_all(&mut self, why: &'static str) {
        self.stopping.get_or_insert(why);
        for (set, stop) in self.running.values() {
            let _ = stop.send(Some(why));
            self.stops
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((set.key.stem(), why));
        }
    }

    async fn next_ended(&mut self) -> Option<(ClaimedSet, Ending)> {
        if self.running.is_empty() {
            return None;
        }
        let (set, ending) = self.rx.recv().await?;
        self.running.remove(&(set.id, set.attempts));
        Some((set, ending))
    }

    fn len(&self) -> usize {
        self.running.len()
    }

    fn running(&self) -> Vec<ClaimedSet> {
        self.running.values().map(|(s, _)| s.clone()).collect()
    }

    async fn shutdown(mut self, why: &'static str) -> Vec<(ClaimedSet, Ending)> {
        self.stop_all(why);
        let mut left = Vec::new();
        while let Some(ended) = self.next_ended().await {
            left.push(ended);
        }
        left
    }
}

/// Claims the lowest pending set, holding back a pair whose set failed; notes every
/// event as a line.
struct TestSource {
    shared: Arc<Shared>,
    held: Vec<(String, String)>,
    events: Arc<Mutex<Vec<String>>>,
}

impl TestSource {
    fn new() -> (TestSource, Arc<Mutex<Vec<String>>>) {
        let text = "rules = \"hus\"\ngames = 2\nmove_time = \"1s\"\nseed = 1\n\
                    [[bot]]\nname = \"a\"\ncommand = \"a\"\n\
                    [[bot]]\nname = \"b\"\ncommand = \"b\"\n";
        let config = match LeagueConfig::parse(Path::new("t.toml"), text) {
            Ok(config) => config,
            Err(e) => panic!("the test's league file: {e}"),
        };
        let events = Arc::new(Mutex::new(Vec::new()));
        (
            TestSource {
                shared: Arc::new(Shared::new(&config, "logs".into(), None)),
                held: Vec::new(),
                events: events.clone(),
            },
            events,
        )
    }

    fn note(&self, line: String) {
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }
}

impl Source<Mem> for TestSource {
    type Outside = ();

    async fn claim(
        &mut self,
        link: &mut Link<Mem>,
        _running: &[ClaimedSet],
    ) -> Result<Option<Start>> {
        let held = self.held.clone();
        let Some(Some(set)) = link.run("claiming", move |s| s.claim_except(&held)).await? else {
            return Ok(None);
        };
        self.note(format!("claimed {} #{}", set.key.stem(), set.attempts));
        Ok(Some(Start {
            set,
            shared: self.shared.clone(),
            tap: None,
        }))
    }

    async fn finished(&mut self, _set: &ClaimedSet, outcome: SetOutcome) -> Result<Played> {
        Ok(Played::without_log(outcome))
    }

    async fn recorded(
        &mut self,
        _link: &mut Link<Mem>,
        set: &ClaimedSet,
        _played: &Played,
        recorded: Recorded,
    ) -> Result<()> {
        self.note(format!(
            "recorded {} #{}: {recorded:?}",
            set.key.stem(),
            set.attempts
        ));
        Ok(())
    }

    async fn failed(
        &mut self,
        _link: &mut Link<Mem>,
        set: &ClaimedSet,
        _failure: SetFailure,
    ) -> Result<AfterFailure> {
        self.note(format!("failed {} #{}", set.key.stem(), set.attempts));
        self.held.push((set.key.a.clone(), set.key.b.clone()));
        Ok(AfterFailure::GiveBack)
    }

    async fn given_back(
        &mut self,
        _link: &mut Link<Mem>,
        sets: &[ClaimedSet],
        put_back: usize,
    ) -> Result<()> {
        let stems: Vec<String> = sets.iter().map(|s| s.key.stem()).collect();
        self.note(format!(
            "given back {} ({put_back} put back)",
            stems.join(" ")
        ));
        Ok(())
    }

    fn abandoned(&mut self, set: &ClaimedSet) {
        self.note(format!("abandoned {} #{}", set.key.stem(), set.attempts));
    }

    fn lost(&mut self, set: &ClaimedSet) {
        self.note(format!("lost {} #{}", set.key.stem(), set.attempts));
    }

    fn say(&mut self, line: &str) {
        self.note(format!("say {line}"));
    }

    async fn done(&mut self, link: &mut Link<Mem>) -> Result<bool> {
        let left = link
            .run("counting", |s| {
                Ok(s.inner().sets.iter().any(|x| x.status != SetStatus::Done))
            })
            .await?;
        Ok(left == Some(false))
    }

    fn store_changed(&mut self, change: &StoreChange) {
        match change {
            StoreChange::Down(_) => self.note("store down".into()),
            StoreChange::Back(_) => self.note("store back".into()),
        }
    }

    fn floor_changed(&mut self, _change: &FloorChange) {}
}

/// A coordinator over `mem` and `pool`, `concurrency` sets at once.
async fn coordinator(
    mem: &Mem,
    pool: FakePool,
    concurrency: usize,
) -> (
    Coordinator<Mem, TestSource, FakePool>,
    Arc<Mutex<Vec<String>>>,
) {
    let (source, events) = TestSource::new();
    let c = match Coordinator::new(
        Link::inline(mem.clone()),
        source,
        pool,
        concurrency,
        DiskFloor::new(Vec::new(), 0),
    )
    .await
    {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    (c, events)
}

fn said(events: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    events.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

const SECOND: Duration = Duration::from_secs(1);

/// Runs `c` on a task of its own; each send of a greater number on the channel is one
/// stop (SIGTERM), as signals are.
fn spawn_run(
    c: Coordinator<Mem, TestSource, FakePool>,
) -> (
    tokio::task::JoinHandle<std::result::Result<Finish, String>>,
    watch::Sender<u32>,
) {
    let (stop_tx, stop_rx) = watch::channel(0u32);
    let run = tokio::spawn(async move {
        let mut seen = 0;
        let stop = move || {
            let mut rx = stop_rx.clone();
            seen += 1;
            let wanted = seen;
            async move {
                let _ = rx.wait_for(|n| *n >= wanted).await;
                "SIGTERM"
            }
        };
        c.run(stop).await.result.map_err(|e| e.to_string())
    });
    (run, stop_tx)
}

async fn finish(
    run: tokio::task::JoinHandle<std::result::Result<Finish, String>>,
) -> std::result::Result<Finish, String> {
    run.await.unwrap_or_else(|e| Err(e.to_string()))
}

/// Defect 1: a set whose lease another runner took over is stopped here at the next
/// renewal, and whatever it would have done counts for nothing; the other runner's
/// attempt is left alone.
#[tokio::test(start_paused = true)]
async fn a_set_whose_lease_another_took_is_stopped_at_the_next_renewal() {
    let mem = Mem::with_sets(&[("a", "b")]);
    let pool = FakePool::new(&[("r1-a-vs-b", Plan::Finish(60 * SECOND, [2, 0]))]);
    let stops = pool.stops.clone();
    let (c, events) = coordinator(&mem, pool, 1).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(3 * SECOND).await;
    assert_eq!(mem.state(1), (SetStatus::Running, 1, None));
    // The lease ran out (this runner was silent) and another runner took the set.
    mem.take_over(1);
    // The next renewal (every quarter of the 8 s lease) finds the claim stale.
    tokio::time::sleep(3 * SECOND).await;
    assert_eq!(
        *stops.lock().unwrap_or_else(|p| p.into_inner()),
        vec![("r1-a-vs-b".to_string(), LEASE_LOST)]
    );
    let _ = stop.send(1);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    // The other runner's attempt holds the set, untouched; nothing was recorded.
    assert_eq!(mem.state(1), (SetStatus::Running, 2, None));
    assert_eq!(mem.results(), vec![]);
    assert_eq!(
        said(&events),
        vec![
            "claimed r1-a-vs-b #1",
            "lost r1-a-vs-b #1",
            "abandoned r1-a-vs-b #1",
            "say SIGTERM: stopping the sets in play",
        ]
    );
}

/// Defect 2: a pair held back after a failure does not stall the sets behind it, and
/// is not claimed again (its attempts not raised) while held.
#[tokio::test(start_paused = true)]
async fn a_held_pair_at_the_head_of_the_queue_holds_up_no_other_set() {
    let mem = Mem::with_sets(&[("a", "b"), ("a", "c"), ("b", "c")]);
    let pool = FakePool::new(&[
        ("r1-a-vs-b", Plan::Fail(SECOND)),
        ("r1-a-vs-c", Plan::Finish(5 * SECOND, [2, 0])),
        ("r1-b-vs-c", Plan::Finish(5 * SECOND, [0, 2])),
    ]);
    let (c, events) = coordinator(&mem, pool, 1).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(60 * SECOND).await;
    assert_eq!(mem.state(1), (SetStatus::Pending, 1, None));
    assert_eq!(mem.state(2), (SetStatus::Done, 1, Some([2, 0])));
    assert_eq!(mem.state(3), (SetStatus::Done, 1, Some([0, 2])));
    let _ = stop.send(1);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    assert_eq!(
        said(&events),
        vec![
            "claimed r1-a-vs-b #1",
            "failed r1-a-vs-b #1",
            // The next set starts first; then what ended goes to the store.
            "claimed r1-a-vs-c #1",
            "given back r1-a-vs-b (1 put back)",
            "claimed r1-b-vs-c #1",
            "recorded r1-a-vs-c #1: Counted",
            "recorded r1-b-vs-c #1: Counted",
            "say SIGTERM: stopping the sets in play",
        ]
    );
}

/// Defect 3: the store out of reach for longer than the lease. The sets in play go on;
/// no set is claimed meanwhile; a result that finished during the outage waits, and,
/// its set having been claimed again by another runner, counts for nothing and changes
/// nothing of the other's claim; a set stopped meanwhile is not put back over the
/// other's claim either.
#[tokio::test(start_paused = true)]
async fn an_outage_longer_than_the_lease_changes_nothing_of_a_claim_taken_over() {
    let mem = Mem::with_sets(&[("a", "b"), ("a", "c"), ("b", "c")]);
    let pool = FakePool::new(&[
        ("r1-a-vs-b", Plan::Finish(10 * SECOND, [2, 0])),
        ("r1-a-vs-c", Plan::Fail(12 * SECOND)),
        ("r1-b-vs-c", Plan::Finish(5 * SECOND, [1, 1])),
    ]);
    let (c, events) = coordinator(&mem, pool, 2).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(SECOND).await;
    mem.set_down(true);
    // Past the lease: both sets are taken over by another runner.
    tokio::time::sleep(9 * SECOND).await;
    mem.take_over(1);
    mem.take_over(2);
    tokio::time::sleep(20 * SECOND).await;
    assert_eq!(
        mem.results(),
        vec![],
        "nothing reaches a store out of reach"
    );
    mem.set_down(false);
    tokio::time::sleep(10 * SECOND).await;
    // The stale result is a duplicate, the stale give-back changed nothing.
    assert_eq!(
        mem.results(),
        vec![
            (Claim { id: 1, attempt: 1 }, Recorded::Duplicate),
            (Claim { id: 3, attempt: 1 }, Recorded::Counted),
        ]
    );
    assert_eq!(mem.state(1), (SetStatus::Running, 2, None));
    assert_eq!(mem.state(2), (SetStatus::Running, 2, None));
    assert_eq!(mem.state(3), (SetStatus::Done, 1, Some([1, 1])));
    let _ = stop.send(1);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    assert_eq!(
        said(&events),
        vec![
            "claimed r1-a-vs-b #1",
            "claimed r1-a-vs-c #1",
            "store down",
            "failed r1-a-vs-c #1",
            // The claim tried once the backoff has passed is what finds the store back.
            "claimed r1-b-vs-c #1",
            "store back",
            "recorded r1-a-vs-b #1: Duplicate",
            "given back r1-a-vs-c (0 put back)",
            "recorded r1-b-vs-c #1: Counted",
            "say SIGTERM: stopping the sets in play",
        ]
    );
}

/// Defect 4: a stop with a result not yet in the store (the store out of reach as the
/// set finished) records it once the store is back, before leaving, and gives back only
/// the set that was really stopped.
#[tokio::test(start_paused = true)]
async fn a_stop_records_the_results_already_played_before_giving_anything_back() {
    let mem = Mem::with_sets(&[("a", "b"), ("a", "c")]);
    let pool = FakePool::new(&[
        ("r1-a-vs-b", Plan::Finish(4 * SECOND, [2, 0])),
        ("r1-a-vs-c", Plan::Finish(100 * SECOND, [0, 2])),
    ]);
    let (c, events) = coordinator(&mem, pool, 2).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(3 * SECOND).await;
    mem.set_down(true);
    tokio::time::sleep(2 * SECOND).await;
    // a-vs-b finished while the store was out of reach; now the stop comes.
    let _ = stop.send(1);
    tokio::time::sleep(3 * SECOND).await;
    assert_eq!(mem.state(1), (SetStatus::Running, 1, None));
    mem.set_down(false);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    assert_eq!(mem.state(1), (SetStatus::Done, 1, Some([2, 0])));
    assert_eq!(mem.state(2), (SetStatus::Pending, 1, None));
    assert_eq!(
        said(&events),
        vec![
            "claimed r1-a-vs-b #1",
            "claimed r1-a-vs-c #1",
            "store down",
            "say SIGTERM: stopping the sets in play",
            "store back",
            "recorded r1-a-vs-b #1: Counted",
            "given back r1-a-vs-c (1 put back)",
        ]
    );
}

/// A stop while the store stays out of reach: the loop leaves once a lease has passed
/// (the results could count for nothing after it), saying which results are lost; a
/// second stop leaves at once.
#[tokio::test(start_paused = true)]
async fn a_stop_with_the_store_gone_leaves_after_a_lease_or_at_a_second_stop() {
    let mem = Mem::with_sets(&[("a", "b")]);
    let pool = FakePool::new(&[("r1-a-vs-b", Plan::Finish(2 * SECOND, [2, 0]))]);
    let (c, events) = coordinator(&mem, pool, 1).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(SECOND).await;
    mem.set_down(true);
    tokio::time::sleep(2 * SECOND).await;
    let started = Instant::now();
    let _ = stop.send(1);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    let waited = started.elapsed();
    assert!(
        waited >= LEASE && waited <= LEASE + BACKOFF_MAX,
        "waited {waited:?}"
    );
    assert_eq!(mem.state(1), (SetStatus::Running, 1, None));
    let lines = said(&events);
    assert_eq!(
        lines.last().map(String::as_str),
        Some("say round 1, a vs b: its result could not reach the store; the set is played again once its lease runs out")
    );

    // The same, with a second stop a second after the first.
    let mem = Mem::with_sets(&[("a", "b")]);
    let pool = FakePool::new(&[("r1-a-vs-b", Plan::Finish(2 * SECOND, [2, 0]))]);
    let (c, events) = coordinator(&mem, pool, 1).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(SECOND).await;
    mem.set_down(true);
    tokio::time::sleep(2 * SECOND).await;
    let started = Instant::now();
    let _ = stop.send(1);
    tokio::time::sleep(SECOND).await;
    let _ = stop.send(2);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    assert!(started.elapsed() < 2 * SECOND, "{:?}", started.elapsed());
    assert!(said(&events).contains(&"say SIGTERM again: leaving now".to_string()));
}

/// A stop mid-set: the set is stopped, given back (pending again, one attempt
/// counted), and the run ends as stopped; a league with nothing left ends as done.
#[tokio::test(start_paused = true)]
async fn a_stop_mid_set_gives_it_back_and_a_league_played_out_is_done() {
    let mem = Mem::with_sets(&[("a", "b"), ("a", "c")]);
    let pool = FakePool::new(&[("r1-a-vs-b", Plan::Finish(100 * SECOND, [2, 0]))]);
    let (c, _events) = coordinator(&mem, pool, 2).await;
    let (run, stop) = spawn_run(c);
    tokio::time::sleep(20 * SECOND).await;
    let _ = stop.send(1);
    assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    assert_eq!(mem.state(1), (SetStatus::Pending, 1, None));
    assert_eq!(mem.state(2), (SetStatus::Done, 1, Some([1, 1])));

    let mem = Mem::with_sets(&[("a", "b"), ("a", "c"), ("b", "c")]);
    let (c, _events) = coordinator(&mem, FakePool::new(&[]), 2).await;
    let (run, _stop) = spawn_run(c);
    assert_eq!(finish(run).await, Ok(Finish::Done));
    for id in 1..=3 {
        assert_eq!(mem.state(id), (SetStatus::Done, 1, Some([1, 1])));
    }
    assert!(mem.inner().renewals > 0);
}

/// A store back after an outage shorter than the lease finds this runner's leases
/// renewed within a quarter of a lease of its return, whatever the outage's length: the
/// backoff between tries never exceeds a quarter of the lease (a 5 s backoff past a 6 s
/// lease lost every set to another runner), and a store found back renews at once.
#[tokio::test(start_paused = true)]
async fn leases_are_renewed_within_a_quarter_lease_of_the_stores_return() {
    for outage in [3, 5, 7, 9, 11, 13, 15].map(Duration::from_secs) {
        let mem = Mem::with_sets(&[("a", "b")]);
        let pool = FakePool::new(&[("r1-a-vs-b", Plan::Finish(100 * SECOND, [2, 0]))]);
        let (c, _events) = coordinator(&mem, pool, 1).await;
        let (run, stop) = spawn_run(c);
        tokio::time::sleep(SECOND / 2).await;
        mem.set_down(true);
        tokio::time::sleep(outage).await;
        mem.set_down(false);
        let back = Instant::now();
        tokio::time::sleep(LEASE).await;
        let first = mem
            .inner()
            .renewed_at
            .iter()
            .copied()
            .find(|at| *at >= back);
        let Some(first) = first else {
            panic!("no renewal after an outage of {outage:?}");
        };
        assert!(
            first - back <= LEASE / 4,
            "renewed {:?} after the store came back from an outage of {outage:?}",
            first - back
        );
        assert_eq!(mem.state(1), (SetStatus::Running, 1, None));
        let _ = stop.send(1);
        assert_eq!(finish(run).await, Ok(Finish::Stopped("SIGTERM")));
    }
}
