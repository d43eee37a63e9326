//! **Background work**: what runs beside the votes and must not slow them (the ledger's
//! drain) runs on a thread of its own, with a single-threaded runtime of its own, at a
//! lower CPU priority: [`NICE`] steps of Unix's nice below the process (nice 10 for a
//! process started at the default 0). Where the cores are busy, the kernel then
//! runs a waiting HTTP worker or Redis first, and the background work in the gaps; the
//! threads it starts (SQLite runs each connection on a thread of its own) take its
//! priority. It is not starved: at nice 10 it still gets about a tenth of a busy core's
//! share.

use std::future::Future;
use std::thread::JoinHandle;

use tokio::sync::oneshot;

/// How many steps of nice the background thread takes below the process (19 is the
/// lowest priority).
pub const NICE: i32 = 10;

/// The nice value of a background thread started by a thread at `nice`: [`NICE`] steps
/// lower, at most 19.
pub fn lowered(nice: i32) -> i32 {
    (nice + NICE).min(19)
}

/// A running background thread; dropping it asks its work to stop, as [`stop`] does.
///
/// [`stop`]: Background::stop
pub struct Background {
    stop: oneshot::Sender<()>,
    thread: JoinHandle<()>,
}

impl Background {
    /// Starts `work` on a thread named `name` at background priority. `work` gets the
    /// signal to stop: it resolves once [`Background::stop`] is called or the handle is
    /// dropped.
    pub fn spawn<F, Fut>(name: &str, work: F) -> std::io::Result<Self>
    where
        F: FnOnce(oneshot::Receiver<()>) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let (stop, stopped) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                lower_priority();
                runtime.block_on(work(stopped));
            })?;
        Ok(Self { stop, thread })
    }

    /// Asks the work to stop, and waits until it has finished and its thread ended.
    pub async fn stop(self) {
        let Self { stop, thread } = self;
        // The work has ended already when nothing receives.
        let _ = stop.send(());
        match tokio::task::spawn_blocking(move || thread.join()).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => tracing::error!("a background thread panicked"),
        }
    }
}

/// The calling thread at its [`lowered`] nice: on Linux `setpriority` with
/// no id sets the calling thread's alone, and the threads it starts inherit it.
#[cfg(unix)]
fn lower_priority() {
    let lowered = rustix::process::getpriority_process(None)
        .and_then(|nice| rustix::process::setpriority_process(None, lowered(nice)));
    if let Err(err) = lowered {
        tracing::warn!(error = %err, "could not lower a background thread's CPU priority; it runs at the default");
    }
}

#[cfg(not(unix))]
fn lower_priority() {}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    /// The nice value of the calling thread.
    fn own_nice() -> i32 {
        rustix::process::getpriority_process(None).unwrap()
    }

    #[tokio::test]
    async fn work_runs_at_background_priority_and_so_do_the_threads_it_starts() {
        let own = own_nice();
        let (seen, niced) = oneshot::channel();
        let background = Background::spawn("test-background", move |stopped| async move {
            let started = std::thread::spawn(own_nice).join().unwrap();
            seen.send((own_nice(), started)).unwrap();
            let _ = stopped.await;
        })
        .unwrap();
        assert_eq!(niced.await.unwrap(), (lowered(own), lowered(own)));
        assert_eq!(own_nice(), own);
        background.stop().await;
    }

    #[tokio::test]
    async fn stop_waits_for_the_work_to_finish() {
        let (finished, done) = std::sync::mpsc::channel();
        let background = Background::spawn("test-background", move |stopped| async move {
            let _ = stopped.await;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            finished.send(()).unwrap();
        })
        .unwrap();
        background.stop().await;
        assert_eq!(done.try_recv(), Ok(()));
    }
}
