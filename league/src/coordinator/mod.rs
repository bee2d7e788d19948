//! The coordinator: the one loop that plays a league's sets, for `hus league`, `hus
//! worker` and `hus serve` alike. It owns what they share: claiming up to the
//! concurrency, renewing leases, stopping a set whose lease another took over,
//! recording results, giving sets back, riding out a store out of reach, the free-space
//! floor, and shutdown. Each runner is a [`Source`]: it says only how to get the next
//! set (the league's schedule in its SQLite file, a shared store's leases, the server's
//! pairing) and what it does around a set (its messages, its pages, its files).
//!
//! Every change to a set takes its [`Claim`] (set and attempt): a result or a give-back
//! of an attempt that no longer holds its set changes nothing in the store, and a set
//! whose lease is lost is stopped here at the next renewal. Results already played are
//! always recorded before anything is given back, and a stop waits for every set's
//! ending: a set that finished as the stop came is recorded, never thrown away.
//!
//! The loop is tested on tokio's paused clock (`tests`) with a store in memory that
//! fails on command and a pool of sets that end when the test says.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::disk::{DiskFloor, FloorChange, FLOOR_RECHECK};
use crate::error::{Error, Result};
use crate::pool::{Ending, SetFailure, SetPool, Shared, Tap};
use crate::store::{
    Claim, ClaimedSet, Claims, Recorded, SetId, SetOutcome, StoreError, StoreThread,
};

#[cfg(test)]
mod tests;

/// The store's backoff bounds while it is out of reach.
pub const BACKOFF_MIN: Duration = Duration::from_millis(200);
/// See [`BACKOFF_MIN`].
pub const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// The first wait after a claim that found nothing; it doubles at each empty claim up
/// to [`IDLE_MAX`], and starts again at a claim or an ending. Short, because at the end
/// of a league the last sets are in play elsewhere and a worker waits for them.
const IDLE_MIN: Duration = Duration::from_millis(20);
/// See [`IDLE_MIN`].
const IDLE_MAX: Duration = Duration::from_secs(1);

/// What a set whose lease another runner took over says in its log's `aborted` record.
pub const LEASE_LOST: &str = "its lease ran out and another took the set over";

/// A set to start: the set claimed, what its thread shares, and its extra sink.
pub struct Start {
    /// The set, claimed.
    pub set: ClaimedSet,
    /// The league and its bots, as the set is to be played.
    pub shared: Arc<Shared>,
    /// Every record goes there too (`hus serve`'s live pages).
    pub tap: Option<Tap>,
}

/// A finished set's result, ready for the store.
#[derive(Clone)]
pub struct Played {
    /// What the store keeps.
    pub outcome: Arc<SetOutcome>,
    /// The log's bytes, where the store keeps logs (a shared store); empty otherwise.
    pub log: Arc<Vec<u8>>,
}

impl Played {
    /// A result whose log stays where it was written (the store keeps none).
    pub fn without_log(outcome: SetOutcome) -> Played {
        Played {
            outcome: Arc::new(outcome),
            log: Arc::new(Vec::new()),
        }
    }
}

/// What becomes of a set that could not be played.
pub enum AfterFailure {
    /// It goes back to the store, to be played again (by this runner or another).
    GiveBack,
    /// It goes back, and the run ends with this error once every other set has ended
    /// (they are stopped; those that finished are recorded).
    Fatal(Error),
}

/// The store's reach changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreChange {
    /// Out of reach (the error said); operations wait with a backoff, sets in play go on.
    Down(String),
    /// Back, after this long.
    Back(Duration),
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The source had nothing more to play ([`Source::done`]).
    Done,
    /// Stopped: the name of what stopped it (a signal, the server's shutdown).
    Stopped(&'static str),
}

/// The sets being played, as the coordinator sees them: [`SetPool`], or a pool of
/// pretend sets in the tests.
pub trait Pool {
    /// Starts a set; its ending comes from [`Pool::next_ended`].
    fn start(&mut self, start: Start);
    /// Stops one set (ignored when it is not in the pool).
    fn stop(&mut self, set: &ClaimedSet, why: &'static str);
    /// Stops every set, and every set started from now on.
    fn stop_all(&mut self, why: &'static str);
    /// The next set to end; `None` at once when the pool is empty. Cancel-safe.
    fn next_ended(&mut self) -> impl Future<Output = Option<(ClaimedSet, Ending)>> + Send;
    /// Sets in the pool.
    fn len(&self) -> usize;
    /// No set in the pool.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The sets in the pool.
    fn running(&self) -> Vec<ClaimedSet>;
    /// Stops what still plays and waits for every set's end; the endings no one took.
    fn shutdown(self, why: &'static str) -> impl Future<Output = Vec<(ClaimedSet, Ending)>> + Send;
}

impl Pool for SetPool {
    fn start(&mut self, start: Start) {
        SetPool::start(self, start.set, start.shared, start.tap)
    }
    fn stop(&mut self, set: &ClaimedSet, why: &'static str) {
        SetPool::stop(self, set, why)
    }
    fn stop_all(&mut self, why: &'static str) {
        SetPool::stop_all(self, why)
    }
    fn next_ended(&mut self) -> impl Future<Output = Option<(ClaimedSet, Ending)>> + Send {
        SetPool::next_ended(self)
    }
    fn len(&self) -> usize {
        SetPool::len(self)
    }
    fn running(&self) -> Vec<ClaimedSet> {
        self.sets().cloned().collect()
    }
    fn shutdown(self, why: &'static str) -> impl Future<Output = Vec<(ClaimedSet, Ending)>> + Send {
        SetPool::shutdown(self, why)
    }
}

/// Where a runner's sets come from, and what it does around them. Every method has
/// the store's [`Link`] when it needs the store: an operation through it waits out an
/// outage rather than failing.
#[allow(async_fn_in_trait)]
pub trait Source<S: Claims + Send + 'static> {
    /// What comes from outside the loop (the server's admin commands).
    type Outside;

    /// Claims the next set to start; `None` when there is none now (or the store is
    /// out of reach). `running`: the sets in play here, and those finished whose result
    /// the store has not taken yet.
    async fn claim(&mut self, link: &mut Link<S>, running: &[ClaimedSet]) -> Result<Option<Start>>;

    /// Whether sets may be claimed now (the server's admin pause).
    fn may_claim(&self) -> bool {
        true
    }

    /// A set finished: its result as the store is to keep it (its log's bytes where
    /// the store keeps logs).
    async fn finished(&mut self, set: &ClaimedSet, outcome: SetOutcome) -> Result<Played>;

    /// The store took a finished set's result: counted, or not (its claim was stale).
    async fn recorded(
        &mut self,
        link: &mut Link<S>,
        set: &ClaimedSet,
        played: &Played,
        recorded: Recorded,
    ) -> Result<()>;

    /// A set could not be played.
    async fn failed(
        &mut self,
        link: &mut Link<S>,
        set: &ClaimedSet,
        failure: SetFailure,
    ) -> Result<AfterFailure>;

    /// These sets (stopped, or failed) went back to the store; `put_back` of them were
    /// still held by their claims (the others were claimed again elsewhere meanwhile).
    async fn given_back(
        &mut self,
        link: &mut Link<S>,
        sets: &[ClaimedSet],
        put_back: usize,
    ) -> Result<()>;

    /// A set was stopped (a stop, a failure elsewhere); it goes back to the store.
    fn stopped(&mut self, set: &ClaimedSet) {
        let _ = set;
    }

    /// A set that is no longer this runner's ended (its lease was lost): its files.
    fn abandoned(&mut self, set: &ClaimedSet);

    /// A set's lease was lost (another runner took it over): it is being stopped here.
    fn lost(&mut self, set: &ClaimedSet);

    /// Says a line of the coordinator's (a stop, a result left unrecorded).
    fn say(&mut self, line: &str);

    /// How often [`Source::tick`] runs; `None`: never.
    fn tick_every(&self) -> Option<Duration> {
        None
    }

    /// Runs every [`Source::tick_every`] (a heartbeat, the server's look at the
    /// workers' results).
    async fn tick(&mut self, link: &mut Link<S>, running: &[ClaimedSet]) -> Result<()> {
        let _ = (link, running);
        Ok(())
    }

    /// The next message from outside; never, by default. Cancel-safe.
    async fn outside(&mut self) -> Self::Outside {
        std::future::pending().await
    }

    /// Handles a message from outside.
    async fn handle(&mut self, link: &mut Link<S>, message: Self::Outside) -> Result<()> {
        let _ = (link, message);
        Ok(())
    }

    /// Nothing plays, nothing waits for the store, and no set could be claimed: whether
    /// the run is over.
    async fn done(&mut self, link: &mut Link<S>) -> Result<bool>;

    /// The store went out of reach, or came back.
    fn store_changed(&mut self, change: &StoreChange);

    /// The free-space floor was crossed, one way or the other.
    fn floor_changed(&mut self, change: &FloorChange);
}

/// The store's connection with its backoff: while the store is out of reach,
/// operations fail fast (`Ok(None)`) until the backoff has passed, then a reconnection
/// is tried. An error that is no outage ([`Claims::is_outage`]) is the caller's.
pub struct Link<S> {
    store: Handle<S>,
    down_since: Option<Instant>,
    retry_at: Instant,
    backoff: Duration,
    /// The longest wait between tries: [`BACKOFF_MAX`], or a quarter of the lease when
    /// that is shorter (a store back after a short restart must find the leases alive:
    /// a 5 s wait past a 6 s lease lost them all).
    backoff_max: Duration,
    change: Option<StoreChange>,
}

/// Where the store is: on its own thread, or (in the tests, on the paused clock, which
/// a thread of its own would let run ahead) in the runtime's.
enum Handle<S> {
    Thread(StoreThread<S>),
    #[cfg(test)]
    Inline(S),
}

impl<S: Claims + Send + 'static> Link<S> {
    /// The link of a store on its thread.
    pub fn new(store: StoreThread<S>) -> Link<S> {
        Link::with(Handle::Thread(store))
    }

    #[cfg(test)]
    fn inline(store: S) -> Link<S> {
        Link::with(Handle::Inline(store))
    }

    fn with(store: Handle<S>) -> Link<S> {
        Link {
            store,
            down_since: None,
            retry_at: Instant::now(),
            backoff: BACKOFF_MIN,
            backoff_max: BACKOFF_MAX,
            change: None,
        }
    }

    /// Runs `op` on the store, without the outage's backoff: for a store that has no
    /// outages (SQLite), or a caller that handles them.
    pub async fn call<T, E>(
        &mut self,
        op: impl FnOnce(&mut S) -> std::result::Result<T, E> + Send + 'static,
    ) -> std::result::Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        match &mut self.store {
            Handle::Thread(thread) => thread.call(op).await,
            #[cfg(test)]
            Handle::Inline(store) => op(store),
        }
    }

    /// Runs `op` on the store; `None` when the store is out of reach (noted, and tried
    /// again after the backoff). `what` names the operation in an error.
    pub async fn run<T: Send + 'static>(
        &mut self,
        what: &str,
        op: impl FnOnce(&mut S) -> std::result::Result<T, StoreError> + Send + 'static,
    ) -> Result<Option<T>> {
        let down = self.down_since.is_some();
        if down && Instant::now() < self.retry_at {
            return Ok(None);
        }
        let (result, outage) = self
            .call(move |s| {
                if down {
                    if let Err(e) = s.reconnect_if_lost() {
                        let outage = s.is_outage(&e);
                        return Ok::<_, StoreError>((Err(e), outage));
                    }
                }
                let result = op(s);
                let outage = result.as_ref().err().is_some_and(|e| s.is_outage(e));
                Ok((result, outage))
            })
            .await
            .map_err(|e| Error::Runtime(format!("{what} failed: {e}")))?;
        match result {
            Ok(v) => {
                if let Some(since) = self.down_since.take() {
                    self.change = Some(StoreChange::Back(since.elapsed()));
                    self.backoff = BACKOFF_MIN;
                }
                Ok(Some(v))
            }
            Err(e) if outage => {
                if self.down_since.is_none() {
                    self.down_since = Some(Instant::now());
                    self.change = Some(StoreChange::Down(e.to_string()));
                }
                self.retry_at = Instant::now() + self.backoff;
                self.backoff = (self.backoff * 2).min(self.backoff_max);
                Ok(None)
            }
            Err(e) => Err(Error::Runtime(format!("{what} failed: {e}"))),
        }
    }

    /// The change of reach since the last call, if any.
    fn take_change(&mut self) -> Option<StoreChange> {
        self.change.take()
    }

    /// When the next try may reach the store, while it is out of reach.
    fn retry_at(&self) -> Option<Instant> {
        self.down_since.map(|_| self.retry_at)
    }

    /// The store's thread, ended once its operations are done.
    pub async fn shutdown(self) {
        match self.store {
            Handle::Thread(thread) => thread.shutdown().await,
            #[cfg(test)]
            Handle::Inline(_) => {}
        }
    }
}

/// The coordinator of one runner: see the module's doc.
pub struct Coordinator<S, So, P> {
    link: Link<S>,
    source: So,
    pool: P,
    concurrency: usize,
    lease: Option<Duration>,
    /// The sets this runner holds, by id, with the attempt that holds each.
    held: HashMap<SetId, ClaimedSet>,
    /// Finished sets whose result the store has not taken yet, in the order they ended.
    unrecorded: VecDeque<(ClaimedSet, Played)>,
    /// Stopped or failed sets to put back.
    give_back: Vec<ClaimedSet>,
    floor: DiskFloor,
    stopping: Option<&'static str>,
    /// Once stopping: when to leave even if the store has not taken every result.
    leave_by: Option<Instant>,
    failure: Option<Error>,
    next_renewal: Instant,
    idle: Duration,
}

/// What [`Coordinator::run`] gives back: how it ended, and the source and the store's
/// link, for what the runner does after.
pub struct Ended<S, So> {
    /// How the run ended, or its error.
    pub result: Result<Finish>,
    /// The runner's source.
    pub source: So,
    /// The store's link.
    pub link: Link<S>,
}

impl<S, So, P> Coordinator<S, So, P>
where
    S: Claims + Send + 'static,
    So: Source<S>,
    P: Pool,
{
    /// A coordinator of `pool`, with sets from `source`, the store behind `link`, at most
    /// `concurrency` sets at once, none started below the `floor`. The lease comes from
    /// the store ([`Claims::lease`]).
    pub async fn new(
        link: Link<S>,
        source: So,
        pool: P,
        concurrency: usize,
        floor: DiskFloor,
    ) -> Result<Self> {
        let mut link = link;
        let lease = link.call(|s| Ok::<_, StoreError>(s.lease())).await?;
        if let Some(lease) = lease {
            link.backoff_max = (lease / 4).clamp(BACKOFF_MIN, BACKOFF_MAX);
        }
        Ok(Coordinator {
            link,
            source,
            pool,
            concurrency,
            lease,
            held: HashMap::new(),
            unrecorded: VecDeque::new(),
            give_back: Vec::new(),
            floor,
            stopping: None,
            leave_by: None,
            failure: None,
            next_renewal: Instant::now(),
            idle: IDLE_MIN,
        })
    }

    /// Plays until the source is done, or `stop` (called again after each stop) says
    /// why to stop: then every set in play is stopped, the loop goes on until each has
    /// ended (finished ones are recorded, the others given back), and a second stop
    /// leaves at once. Whatever way the loop is left, the pool is shut down: no set
    /// outlives its runner.
    pub async fn run<F>(mut self, mut stop: impl FnMut() -> F) -> Ended<S, So>
    where
        F: Future<Output = &'static str>,
    {
        let result = self.play(&mut stop).await;
        // Endings no one took are left only after an error: their claims stay in the
        // store until their leases run out (or the next run puts them back).
        let _left = self.pool.shutdown("the end of its runner").await;
        Ended {
            result,
            source: self.source,
            link: self.link,
        }
    }

    async fn play<F>(&mut self, stop: &mut impl FnMut() -> F) -> Result<Finish>
    where
        F: Future<Output = &'static str>,
    {
        let mut stopped = Box::pin(stop());
        let mut tick = self.source.tick_every().map(|every| {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick
        });
        loop {
            if let Some(lease) = self.lease {
                if Instant::now() >= self.next_renewal {
                    self.renew(lease).await?;
                }
            }
            let change = self.floor.update();
            if !matches!(change, FloorChange::Same) {
                self.source.floor_changed(&change);
            }
            let claimed_none = self.claim().await?;
            self.flush().await?;
            self.note_store();
            let idle =
                self.pool.is_empty() && self.unrecorded.is_empty() && self.give_back.is_empty();
            if self.stopping.is_some() || self.failure.is_some() {
                if idle {
                    break;
                }
                if self.pool.is_empty() && self.leave_by.is_some_and(|by| Instant::now() >= by) {
                    self.leave_unrecorded();
                    break;
                }
            } else if idle && claimed_none && self.source.done(&mut self.link).await? {
                self.note_store();
                return Ok(Finish::Done);
            }
            let wait = self.wait(claimed_none);
            tokio::select! {
                why = &mut stopped => {
                    if self.stopping.is_some() {
                        self.source.say(&format!("{why} again: leaving now"));
                        self.leave_unrecorded();
                        break;
                    }
                    self.stop(why);
                    stopped = Box::pin(stop());
                }
                Some((set, ending)) = self.pool.next_ended() => {
                    self.idle = IDLE_MIN;
                    self.ended(set, ending).await?;
                }
                _ = tokio::time::sleep(wait) => {}
                _ = async { match tick.as_mut() { Some(t) => { t.tick().await; } None => std::future::pending().await } } => {
                    let running = self.pool.running();
                    self.source.tick(&mut self.link, &running).await?;
                }
                message = self.source.outside() => {
                    self.source.handle(&mut self.link, message).await?;
                }
            }
        }
        self.note_store();
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        Ok(Finish::Stopped(self.stopping.unwrap_or("a stop")))
    }

    /// Stops every set in play (first stop).
    fn stop(&mut self, why: &'static str) {
        self.stopping = Some(why);
        self.leave_within_a_lease();
        self.source
            .say(&format!("{why}: stopping the sets in play"));
        self.pool.stop_all(why);
    }

    /// From now on the loop leaves once nothing plays and a lease has passed, even with
    /// results the store has not taken (they could count for nothing after it).
    fn leave_within_a_lease(&mut self) {
        self.leave_by = Some(Instant::now() + self.lease.unwrap_or(Duration::ZERO));
    }

    /// Says which results the store never took (a stop while it was out of reach).
    fn leave_unrecorded(&mut self) {
        for (set, _) in &self.unrecorded {
            let line = format!(
                "{}: its result could not reach the store; the set is played again once its lease runs out",
                set.key
            );
            self.source.say(&line);
        }
    }

    fn note_store(&mut self) {
        if let Some(change) = self.link.take_change() {
            if matches!(change, StoreChange::Back(_)) {
                // The leases are renewed at once: they ran on while the store was away.
                self.next_renewal = Instant::now();
            }
            self.source.store_changed(&change);
        }
    }

    /// Claims and starts sets up to the concurrency; true when a claim found none (or
    /// none may be claimed now).
    async fn claim(&mut self) -> Result<bool> {
        // While the store is out of reach, a claim is tried again once its backoff has
        // passed: the try is what finds the store back.
        let waiting = self.link.retry_at().is_some_and(|at| Instant::now() < at);
        if self.stopping.is_some()
            || self.failure.is_some()
            || self.floor.low().is_some()
            || !self.source.may_claim()
            || waiting
        {
            return Ok(true);
        }
        while self.pool.len() < self.concurrency {
            // A set that finished but whose result the store has not taken yet is still
            // in play for whoever chooses the next (the server's pairing sees it neither
            // finished nor running otherwise).
            let mut running = self.pool.running();
            running.extend(self.unrecorded.iter().map(|(set, _)| set.clone()));
            let claimed = self.source.claim(&mut self.link, &running).await?;
            self.note_store();
            let Some(start) = claimed else {
                return Ok(true);
            };
            self.idle = IDLE_MIN;
            self.held.insert(start.set.id, start.set.clone());
            self.pool.start(start);
        }
        Ok(false)
    }

    /// Renews the leases of the sets held; a set whose lease is lost is stopped.
    async fn renew(&mut self, lease: Duration) -> Result<()> {
        self.next_renewal = Instant::now() + lease / 4;
        if self.held.is_empty() {
            return Ok(());
        }
        let claims: Vec<Claim> = self.held.values().map(ClaimedSet::claim).collect();
        let asked = claims.clone();
        let Some(kept) = self
            .link
            .run("renewing leases", move |s| s.renew_claims(&asked))
            .await?
        else {
            return Ok(());
        };
        self.note_store();
        for (claim, kept) in claims.iter().zip(kept) {
            if kept {
                continue;
            }
            if let Some(set) = self.held.remove(&claim.id) {
                self.pool.stop(&set, LEASE_LOST);
                self.source.lost(&set);
            }
        }
        Ok(())
    }

    /// Sends the results waiting for the store, then gives back what is to go back:
    /// a result is never behind a give-back.
    async fn flush(&mut self) -> Result<()> {
        while let Some((set, played)) = self.unrecorded.front() {
            let (sent, p) = (set.clone(), played.clone());
            let Some(recorded) = self
                .link
                .run("recording a result", move |s| {
                    s.record_played(&sent, &p.outcome, &p.log)
                })
                .await?
            else {
                return Ok(());
            };
            self.note_store();
            let Some((set, played)) = self.unrecorded.pop_front() else {
                break;
            };
            self.source
                .recorded(&mut self.link, &set, &played, recorded)
                .await?;
        }
        if self.give_back.is_empty() {
            return Ok(());
        }
        let claims: Vec<Claim> = self.give_back.iter().map(ClaimedSet::claim).collect();
        let Some(put_back) = self
            .link
            .run("putting sets back", move |s| s.requeue(&claims))
            .await?
        else {
            return Ok(());
        };
        self.note_store();
        let sets = std::mem::take(&mut self.give_back);
        self.source
            .given_back(&mut self.link, &sets, put_back)
            .await
    }

    /// A set of the pool ended.
    async fn ended(&mut self, set: ClaimedSet, ending: Ending) -> Result<()> {
        if self
            .held
            .get(&set.id)
            .is_none_or(|h| h.attempts != set.attempts)
        {
            // No longer ours (its lease was lost): whatever it did counts for nothing.
            self.source.abandoned(&set);
            return Ok(());
        }
        self.held.remove(&set.id);
        match ending {
            Ending::Finished(outcome) => {
                let played = self.source.finished(&set, outcome).await?;
                self.unrecorded.push_back((set, played));
            }
            Ending::Stopped => {
                self.source.stopped(&set);
                self.give_back.push(set);
            }
            Ending::Failed(failure) => {
                let after = self.source.failed(&mut self.link, &set, failure).await?;
                self.give_back.push(set);
                if let AfterFailure::Fatal(e) = after {
                    if self.failure.is_none() {
                        self.failure = Some(e);
                        self.leave_within_a_lease();
                        self.pool.stop_all("the failure of another set");
                    }
                }
            }
        }
        Ok(())
    }

    /// How long to wait for an ending before looking again.
    fn wait(&mut self, claimed_none: bool) -> Duration {
        let now = Instant::now();
        let mut wait = if !self.unrecorded.is_empty() || !self.give_back.is_empty() {
            BACKOFF_MIN
        } else if self.floor.low().is_some() {
            FLOOR_RECHECK
        } else if claimed_none {
            let wait = self.idle;
            self.idle = (self.idle * 2).min(IDLE_MAX);
            wait
        } else {
            IDLE_MAX
        };
        if self.lease.is_some() && !self.held.is_empty() {
            wait = wait.min(self.next_renewal.saturating_duration_since(now));
        }
        if let Some(at) = self.link.retry_at() {
            wait = wait
                .max(at.saturating_duration_since(now))
                .min(self.link.backoff_max);
        }
        if let Some(by) = self.leave_by {
            if self.pool.is_empty() {
                wait = wait.min(by.saturating_duration_since(now));
            }
        }
        wait
    }
}
