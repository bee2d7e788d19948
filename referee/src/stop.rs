//! Stopping a set from outside: the signals that ask a referee to end its sets (the
//! logs then end with `aborted`).

/// Resolves on Ctrl-C or SIGTERM, naming it. Its handlers are installed when it is
/// called, not when it is first polled: a set that writes its header before the stop's
/// future is polled (a `select!` polls its branches in any order) must not let a
/// SIGTERM that comes then kill the referee before it ends the log with `aborted`.
/// Call it inside the runtime.
pub fn stop_signal() -> impl std::future::Future<Output = &'static str> + Send {
    use tokio::signal::unix::{signal, SignalKind};
    let term = signal(SignalKind::terminate()).ok();
    let int = signal(SignalKind::interrupt()).ok();
    async move {
        match (term, int) {
            (Some(mut term), Some(mut int)) => tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            (Some(mut term), None) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            (None, Some(mut int)) => {
                int.recv().await;
                "SIGINT"
            }
            (None, None) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
}
