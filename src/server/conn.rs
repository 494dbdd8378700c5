//! Serving connections, for both listeners: a bounded number open at once, each closed when
//! it idles past `--idle-timeout` (HTTP/1.1 and HTTP/2 alike, whatever pings it answers),
//! and, while the server drains, told to go elsewhere — HTTP/1.1 answers carry
//! `Connection: close` and HTTP/2 connections get a GOAWAY — before they are closed. What
//! befalls connections is counted in `covenant_connection_events_total` and logged at a
//! bounded rate, so a flood cannot fill a disk.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use futures_util::stream::{FuturesUnordered, StreamExt};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify, Semaphore};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;

use crate::metrics::Metrics;
use crate::telemetry::Throttle;

/// One listener's way of serving: TLS or not, the routes, the timeouts, the cap.
pub(crate) struct Serving {
    /// `webhook` or `admin`, for metrics and logs.
    pub name: &'static str,
    /// The TLS acceptor; none for plain HTTP.
    pub tls: Option<TlsAcceptor>,
    pub router: Router,
    pub handshake_timeout: Duration,
    pub idle_timeout: Duration,
    /// Open connections at most; the listener stops accepting while all are taken.
    pub cap: usize,
    open: Arc<Semaphore>,
    /// The readiness told when every slot serves a request (the webhook's; none for admin).
    pub full: Option<Arc<crate::server::state::Readiness>>,
    /// Bytes of answers made and not yet taken by their clients, over every connection.
    unsent: Arc<AtomicUsize>,
    /// The open connections, oldest first, so an idle one can be closed for a new one.
    live: Mutex<std::collections::VecDeque<std::sync::Weak<Activity>>>,
    draining: watch::Receiver<bool>,
    metrics: Metrics,
    throttle: Throttle,
}

/// How long a new connection may take to send its first byte (after the TLS handshake, for
/// TLS): the apiserver, the kubelet and Prometheus speak at once, so a silent connection is a
/// client holding a slot, closed in seconds rather than at the idle timeout.
const FIRST_BYTE: Duration = Duration::from_secs(5);

/// What a new connection sent first.
enum First {
    /// Its first bytes.
    Bytes(Vec<u8>),
    /// It ended (or failed) before sending any.
    Ended,
    /// It sent nothing within `FIRST_BYTE`.
    Silent,
    /// It was closed to make room for another at the cap.
    Evicted,
}

/// Tells a listener's connections that the server is draining.
pub(crate) struct Drain(watch::Sender<bool>);

impl Drain {
    /// From now on, connections finish what they are serving and close.
    pub fn start(&self) {
        self.0.send_replace(true);
    }
}

impl Serving {
    /// A listener's serving state, and the handle that drains its connections.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &'static str,
        tls: Option<TlsAcceptor>,
        router: Router,
        handshake_timeout: Duration,
        idle_timeout: Duration,
        cap: usize,
        metrics: Metrics,
    ) -> (Arc<Serving>, Drain) {
        let (tx, rx) = watch::channel(false);
        let serving = Serving {
            name,
            tls,
            router,
            handshake_timeout,
            idle_timeout,
            cap: cap.max(1),
            open: Arc::new(Semaphore::new(cap.max(1))),
            live: Mutex::new(std::collections::VecDeque::new()),
            unsent: Arc::default(),
            full: None,
            draining: rx,
            metrics,
            throttle: Throttle::new(Duration::from_secs(10)),
        };
        (Arc::new(serving), Drain(tx))
    }

    fn event(&self, event: &'static str) {
        self.metrics.connection_events.with_label_values(&[self.name, event]).inc();
    }

    /// Accept until `stop` resolves, serving each connection on its own task. At the cap,
    /// nothing more is accepted (the kernel's backlog holds the rest) until one closes.
    pub async fn accept(
        self: &Arc<Self>,
        listener: &TcpListener,
        stop: impl std::future::Future<Output = ()>,
    ) {
        tokio::pin!(stop);
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = &mut stop => return,
            };
            let (tcp, peer) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors (EMFILE) and the like: transient; back off briefly.
                    self.event("accept_failed");
                    if let Some(skipped) = self.throttle.admit() {
                        tracing::warn!(listener = self.name, error = %e, skipped, "accept failed");
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            // At the cap, the connection idle the longest (no request in flight: silent,
            // sending a head slowly, or kept alive) is closed to make room for this one: a
            // flood of idle connections never keeps a probe, a scrape or the apiserver out.
            // Connections that all serve requests are waited for (one at a time is held).
            let permit = match self.open.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => {
                    // None idle to close: every slot serves a request, and readiness says so
                    // until one is free.
                    let full = !self.reclaim();
                    if let Some(r) = self.full.as_ref().filter(|_| full) {
                        r.set_full(true);
                    }
                    let permit = tokio::select! {
                        p = self.open.clone().acquire_owned() => match p {
                            Ok(p) => p,
                            Err(_) => return,
                        },
                        () = &mut stop => return,
                    };
                    if let Some(r) = &self.full {
                        r.set_full(false);
                    }
                    permit
                }
            };
            let serving = self.clone();
            tokio::spawn(async move {
                serving.metrics.connections_open.with_label_values(&[serving.name]).inc();
                serving.clone().connection(tcp, peer).await;
                serving.metrics.connections_open.with_label_values(&[serving.name]).dec();
                drop(permit);
            });
        }
    }

    /// Close the connection idle the longest, if one is idle; whether one was.
    fn reclaim(&self) -> bool {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        let idlest = live
            .iter()
            .filter_map(std::sync::Weak::upgrade)
            .filter(|a| a.in_flight() == 0 && !a.evicted.load(Ordering::SeqCst))
            .min_by_key(|a| a.idle_since());
        match idlest {
            Some(a) => {
                a.evicted.store(true, Ordering::SeqCst);
                a.evict.notify_one();
                self.event("reclaimed");
                true
            }
            None => false,
        }
    }

    /// Wait until every connection has closed, at most `grace`; whether they all did.
    pub async fn closed(&self, grace: Duration) -> bool {
        let all = u32::try_from(self.cap).unwrap_or(u32::MAX);
        tokio::time::timeout(grace, self.open.acquire_many(all)).await.is_ok()
    }

    async fn connection(self: Arc<Self>, tcp: tokio::net::TcpStream, peer: SocketAddr) {
        let _ = tcp.set_nodelay(true);
        let activity = Arc::new(Activity::new());
        {
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            // Closed connections are forgotten before the list outgrows the cap.
            if live.len() >= 2 * self.cap {
                live.retain(|w| w.strong_count() > 0);
            }
            live.push_back(Arc::downgrade(&activity));
        }
        let Some(acceptor) = self.tls.clone() else {
            let mut tcp = tcp;
            if let First::Bytes(first) = self.first_bytes(&mut tcp, &activity).await {
                self.http(first, tcp, peer, activity).await;
            }
            return;
        };
        let handshake = tokio::select! {
            h = tokio::time::timeout(self.handshake_timeout, acceptor.accept(tcp)) => h,
            () = activity.evict.notified() => return,
        };
        match handshake {
            // A client that sends nothing after the handshake is closed with a TLS close_notify
            // within seconds, before HTTP is spoken.
            Ok(Ok(mut stream)) => match self.first_bytes(&mut stream, &activity).await {
                First::Bytes(first) => self.http(first, stream, peer, activity).await,
                First::Ended => {}
                First::Silent | First::Evicted => {
                    let _ = tokio::time::timeout(Duration::from_secs(1), stream.shutdown()).await;
                }
            },
            Ok(Err(e)) => {
                self.event("handshake_failed");
                tracing::debug!(%peer, error = %e, "TLS handshake failed");
            }
            Err(_) => {
                self.event("handshake_timeout");
                tracing::debug!(%peer, "TLS handshake timed out");
            }
        }
    }

    /// The first bytes a new connection sends, within `FIRST_BYTE` (or the idle timeout, if
    /// shorter); a connection that stays silent is counted (`silent_closed`).
    async fn first_bytes<S: AsyncRead + Unpin>(&self, io: &mut S, activity: &Activity) -> First {
        let mut first = vec![0u8; 4096];
        let read = tokio::select! {
            r = tokio::time::timeout(FIRST_BYTE.min(self.idle_timeout), io.read(&mut first)) => r,
            () = activity.evict.notified() => return First::Evicted,
        };
        match read {
            Ok(Ok(n)) if n > 0 => {
                first.truncate(n);
                First::Bytes(first)
            }
            Ok(_) => First::Ended,
            Err(_) => {
                self.event("silent_closed");
                First::Silent
            }
        }
    }

    async fn http<I>(&self, first: Vec<u8>, io: I, peer: SocketAddr, activity: Arc<Activity>)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (io, back) = Prefixed::new(first, io);
        if self.serve_http(io, peer, activity).await {
            if let Ok(io) = back.await {
                linger(io).await;
            }
        }
    }

    /// Serve HTTP on a connection until it ends; whether it ended by closing in good order
    /// (after a drain's GOAWAY or `Connection: close`, or an idle close), its answers written.
    async fn serve_http<I>(&self, io: Prefixed<I>, peer: SocketAddr, activity: Arc<Activity>) -> bool
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let mut draining = self.draining.clone();
        let accepted_draining = *draining.borrow_and_update();
        let streams = Streams::default();
        let mut builder = auto::Builder::new(streams.clone());
        // HTTP/1: `idle_timeout` to send each request head (the body's own deadline is the
        // handler's); a connection accepted while draining serves one request. HTTP/2:
        // bounded streams and resets (the rapid-reset flood). No keep-alive pings of its own:
        // a peer gone silent leaves its connection idle, and the idle close below ends it (or,
        // with answers it never takes, the stall close); the API server health-checks its
        // connections with pings of its own (client-go's HTTP/2 read-idle timeout, 30 s). With
        // pings on, hyper timed every frame received, a clock read and a lock each. DATA
        // frames of up to 512 KiB rather than 16 KiB (the apiserver's Go client sends frames
        // as large as allowed, up to 512 KiB): a CRD update of a few hundred KB arrives in one
        // frame, a piece taken whole, not dozens to take and join; the codec holds at most one
        // frame of a connection while it reads it.
        // hyper's own head timeout is the backstop for a head left half-sent: a little later
        // than the idle close below, which ends an idle connection with a close_notify.
        let head_timeout = self.idle_timeout + (self.idle_timeout / 4).max(Duration::from_secs(1));
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(head_timeout)
            .keep_alive(!accepted_draining);
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(100)
            .max_frame_size(512 * 1024)
            .max_pending_accept_reset_streams(64);
        let router = self.router.clone();
        let tracked = activity.clone();
        // The answers this connection has made and its client has not yet taken: a client
        // that never reads (an HTTP/2 window of 0) pins them, so past a cap, for the
        // connection or for the listener, the connection is closed and they are freed.
        let held = Held {
            conn: Arc::default(),
            total: self.unsent.clone(),
            over: Arc::new(Notify::new()),
            taken: Arc::new(Mutex::new(Instant::now())),
        };
        let holding = held.clone();
        let service = tower::service_fn(move |request: axum::http::Request<hyper::body::Incoming>| {
            let turn = tracked.begin();
            let response = tower::ServiceExt::oneshot(router.clone(), request);
            let holding = holding.clone();
            async move {
                let r = response.await;
                drop(turn);
                r.map(|answer| answer.map(|body| axum::body::Body::new(Unsent::new(body, holding))))
            }
        });
        let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
        tokio::pin!(conn);
        let mut running = FuturesUnordered::new();
        // The idle clock: one timer for the connection, looked at only when it fires. A request
        // served meanwhile has moved the deadline on, and the timer is set again for it then,
        // so a request costs the connection no timer and no wake-up of its own.
        let idle = tokio::time::sleep_until(activity.idle_since() + self.idle_timeout);
        tokio::pin!(idle);
        let stall = tokio::time::sleep_until(Instant::now());
        tokio::pin!(stall);
        let mut stalling = false;
        let mut closing = false;
        loop {
            if !closing {
                // Draining: a connection that was open before finishes what it serves and
                // closes now; one accepted while draining once it has served a request.
                let drained = *draining.borrow()
                    && (!accepted_draining || (activity.served() > 0 && activity.in_flight() == 0));
                if drained {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                    continue;
                }
            }
            tokio::select! {
                done = std::future::poll_fn(|cx| streams.drive(conn.as_mut(), &mut running, cx)) => {
                    let orderly = done.is_ok();
                    if let Err(e) = done {
                        self.event("error");
                        tracing::debug!(%peer, listener = self.name, error = %e, "connection ended with an error");
                    }
                    Streams::finish(running);
                    return orderly;
                }
                changed = draining.changed(), if !closing => {
                    if changed.is_err() {
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                    }
                }
                // Answers past the cap: looked at again once the client has had `STALLED` to
                // take one; a client that reads (however many answers it has asked for) keeps
                // its connection, one that takes none is closed and its answers freed.
                () = held.over.notified(), if !stalling => {
                    stalling = held.over_cap();
                    stall.as_mut().reset(held.last_taken() + STALLED);
                }
                () = stall.as_mut(), if stalling => {
                    stalling = held.over_cap();
                    if stalling && held.last_taken().elapsed() >= STALLED {
                        self.event("unread_closed");
                        if let Some(skipped) = self.throttle.admit() {
                            tracing::warn!(%peer, listener = self.name, held = held.conn.load(Ordering::SeqCst), skipped, "closing a connection whose client does not read its answers");
                        }
                        return false;
                    }
                    stall.as_mut().reset(held.last_taken() + STALLED);
                }
                // Closed to make room for a new connection: only while it serves nothing.
                () = activity.evict.notified(), if !closing => {
                    if activity.in_flight() == 0 {
                        // Nothing is being served (a head still arriving is not served yet):
                        // closed now, not after the head it may never finish.
                        self.event("idle_closed");
                        Streams::finish(running);
                        return false;
                    } else {
                        activity.evicted.store(false, Ordering::SeqCst);
                    }
                }
                // Only a connection accepted while draining waits on its request's end (to close
                // once it has served one).
                () = activity.ended.notified(), if !closing && accepted_draining => {}
                () = idle.as_mut(), if !closing => {
                    let now = Instant::now();
                    let idle_at = activity.idle_since() + self.idle_timeout;
                    if activity.in_flight() == 0 && idle_at <= now {
                        self.event("idle_closed");
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                    } else if activity.in_flight() == 0 {
                        idle.as_mut().reset(idle_at);
                    } else {
                        idle.as_mut().reset(now + self.idle_timeout);
                    }
                }
            }
        }
    }
}

/// The HTTP/2 streams of one connection, run by the connection's own task rather than each on
/// a task of its own: hyper hands each stream it accepts to this executor, which keeps it for
/// the connection to poll (`drive`). The streams a read of the socket brought in are all
/// answered before the connection is polled again, so their answers leave in one write
/// instead of one write each, and no stream costs a task, a hand-off and a wake-up of the
/// connection. A stream's work is small here: what is large or judged against the cluster goes
/// to the blocking pool, off every connection's task. The cost is that one connection's
/// streams no longer spread over the worker threads (its TLS and framing never did): a
/// connection's inline work, a few microseconds a review, is done in turn.
///
/// Public for the load bench, whose baseline servers can be run the same way
/// (`bare_webhook --inline-streams`) to tell this apart from covenant's own work.
#[derive(Clone, Default)]
pub struct Streams(Arc<Mutex<Vec<Stream>>>);

type Stream = Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

impl<F: std::future::Future<Output = ()> + Send + 'static> hyper::rt::Executor<F> for Streams {
    fn execute(&self, stream: F) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(Box::pin(stream));
    }
}

impl Streams {
    /// Serve a connection built with these streams as its executor: its output once it has
    /// ended, streams still running then finished on a task of their own.
    pub async fn serve<C: std::future::Future>(self, conn: C) -> C::Output {
        tokio::pin!(conn);
        let mut running = FuturesUnordered::new();
        let done = std::future::poll_fn(|cx| self.drive(conn.as_mut(), &mut running, cx)).await;
        Streams::finish(running);
        done
    }

    /// Poll the connection, then every stream it has handed over or woken; the connection's
    /// output once it has ended. A stream that answers wakes the connection (this task), which
    /// then writes what every stream answered.
    fn drive<C: std::future::Future>(
        &self,
        conn: Pin<&mut C>,
        running: &mut FuturesUnordered<Stream>,
        cx: &mut Context<'_>,
    ) -> Poll<C::Output> {
        let done = conn.poll(cx);
        running.extend(std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner())));
        if done.is_pending() {
            while let Poll::Ready(Some(())) = running.poll_next_unpin(cx) {}
        }
        done
    }

    /// Streams still running when their connection ended (it failed under them) finish on a
    /// task of their own, as each stream ran before: what they answer goes nowhere, but what
    /// they count and log is done.
    fn finish(running: FuturesUnordered<Stream>) {
        if !running.is_empty() {
            tokio::spawn(async move { running.for_each(|()| async {}).await });
        }
    }
}

/// The most answer bytes one connection may hold that its client has not taken before it
/// must show it reads (take an answer within `STALLED`).
const UNSENT_PER_CONNECTION: usize = 4 << 20;
/// The most answer bytes all of a listener's connections may hold; past it, a connection
/// holding more than its share of it is closed.
const UNSENT_TOTAL: usize = 64 << 20;

/// The answer bytes a connection holds unsent, and the listener's total.
#[derive(Clone)]
struct Held {
    conn: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    over: Arc<Notify>,
    /// When the client last took a whole answer (or the connection opened).
    taken: Arc<Mutex<Instant>>,
}

impl Held {
    fn over_cap(&self) -> bool {
        let conn = self.conn.load(Ordering::SeqCst);
        conn > UNSENT_PER_CONNECTION
            || (self.total.load(Ordering::SeqCst) > UNSENT_TOTAL && conn > UNSENT_TOTAL / 64)
    }

    fn add(&self, n: usize) {
        self.conn.fetch_add(n, Ordering::SeqCst);
        self.total.fetch_add(n, Ordering::SeqCst);
        if self.over_cap() {
            self.over.notify_one();
        }
    }

    fn sub(&self, n: usize) {
        self.conn.fetch_sub(n, Ordering::SeqCst);
        self.total.fetch_sub(n, Ordering::SeqCst);
        *self.taken.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn last_taken(&self) -> Instant {
        *self.taken.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How long a connection past its cap of unsent answers may go without its client taking one
/// before it is closed.
const STALLED: Duration = Duration::from_secs(5);

/// An answer's body, counted as held until its stream is done with it.
struct Unsent {
    body: axum::body::Body,
    left: usize,
    held: Held,
}

impl Unsent {
    fn new(body: axum::body::Body, held: Held) -> Unsent {
        use http_body::Body as _;
        let left = usize::try_from(body.size_hint().lower()).unwrap_or(usize::MAX / 2);
        held.add(left);
        Unsent { body, left, held }
    }
}

impl http_body::Body for Unsent {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        // Bytes polled are not yet sent: hyper takes a chunk, then waits for the client's
        // window to send it, holding the body until it has. So they count until the body is
        // dropped, when its stream is done (sent, or reset).
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Unsent {
    fn drop(&mut self) {
        self.held.sub(self.left);
    }
}

/// What a connection is doing: requests in flight, requests served, and since when it has
/// been idle.
struct Activity {
    in_flight: AtomicUsize,
    served: AtomicUsize,
    idle_since: Mutex<Instant>,
    ended: Notify,
    /// Told to close, to make room for a new connection at the cap.
    evict: Notify,
    evicted: std::sync::atomic::AtomicBool,
}

/// A request in flight; its end is noted when dropped.
struct Turn(Arc<Activity>);

impl Drop for Turn {
    fn drop(&mut self) {
        *self.0.idle_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_one();
    }
}

impl Activity {
    fn new() -> Activity {
        Activity {
            in_flight: AtomicUsize::new(0),
            served: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            ended: Notify::new(),
            evict: Notify::new(),
            evicted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn begin(self: &Arc<Self>) -> Turn {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.served.fetch_add(1, Ordering::SeqCst);
        Turn(self.clone())
    }

    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    fn idle_since(&self) -> Instant {
        *self.idle_since.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How long a connection closed in good order goes on reading (and dropping) what its client
/// still sends, waiting for the client to close its side.
const LINGER: Duration = Duration::from_secs(2);

/// A lingering close. A connection ended in good order has written every answer and shut its
/// side (a TLS close_notify, a FIN), but its client may still be sending: requests it wrote
/// before it read the GOAWAY, window updates, pings. Closing a socket with bytes unread makes
/// the kernel send a reset, and a reset makes the client's kernel throw away what it had
/// received and its program not yet read — the last answers, written and lost. So the
/// connection reads and drops until the client closes (it does once it has read the GOAWAY and
/// its answers), for `LINGER` at most; only then is the socket closed.
async fn linger<I: AsyncRead + AsyncWrite + Unpin>(mut io: I) {
    let _ = tokio::time::timeout(LINGER, async {
        let _ = io.shutdown().await;
        let mut sink = [0u8; 8192];
        while let Ok(n) = io.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}

/// A stream whose first bytes were already read: they are read again first. When the server
/// is done with it, the stream goes back through `back` (for a lingering close).
struct Prefixed<I> {
    first: Vec<u8>,
    at: usize,
    io: Option<I>,
    back: Option<tokio::sync::oneshot::Sender<I>>,
}

impl<I> Prefixed<I> {
    fn new(first: Vec<u8>, io: I) -> (Self, tokio::sync::oneshot::Receiver<I>) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        (Prefixed { first, at: 0, io: Some(io), back: Some(tx) }, rx)
    }

    fn io(&mut self) -> std::io::Result<Pin<&mut I>>
    where
        I: Unpin,
    {
        match self.io.as_mut() {
            Some(io) => Ok(Pin::new(io)),
            None => Err(std::io::ErrorKind::NotConnected.into()),
        }
    }
}

impl<I> Drop for Prefixed<I> {
    fn drop(&mut self) {
        if let (Some(io), Some(back)) = (self.io.take(), self.back.take()) {
            let _ = back.send(io);
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Prefixed<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.at < self.first.len() {
            let n = (self.first.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.first[at..at + n]);
            self.at += n;
            if self.at == self.first.len() {
                self.first = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        match self.io() {
            Ok(io) => io.poll_read(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Prefixed<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.io() {
            Ok(io) => io.poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.io() {
            Ok(io) => io.poll_write_vectored(cx, bufs),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.io.as_ref().is_some_and(I::is_write_vectored)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.io() {
            Ok(io) => io.poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.io() {
            Ok(io) => io.poll_shutdown(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}
