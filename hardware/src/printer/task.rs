//! The thin I/O task: owns the connection, feeds the [`Driver`] what
//! happens and does what it asks. Everything that decides lives in the
//! driver; this file only moves bytes and reads clocks.

use std::collections::VecDeque;
use std::future::{Future, pending};
use std::io;
use std::pin::Pin;
use std::time::Instant;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::printer::driver::{Action, Driver, DriverConfig, Job, JobOutcome, Moment, PrinterState};
use crate::printer::transport::{
    Connecting, Endpoint, Incoming, Link, LinkWriter, ReaderTask, Transport,
};

enum Command {
    Submit(Job),
    Shutdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the printer task has stopped")]
pub struct PrinterStopped;

/// A cloneable handle to submit jobs and watch the printer's state.
#[derive(Debug, Clone)]
pub struct PrinterHandle {
    commands: mpsc::UnboundedSender<Command>,
    state: watch::Receiver<PrinterState>,
}

impl PrinterHandle {
    /// Queues a job; a job whose id is already queued is ignored.
    pub fn submit(&self, job: Job) -> Result<(), PrinterStopped> {
        self.commands
            .send(Command::Submit(job))
            .map_err(|_| PrinterStopped)
    }

    pub fn state(&self) -> PrinterState {
        self.state.borrow().clone()
    }

    /// A receiver that sees every state change.
    pub fn watch_state(&self) -> watch::Receiver<PrinterState> {
        self.state.clone()
    }
}

/// A running printer: its task, a handle, and the job outcomes (a single
/// consumer, the one that persists them). Dropping it stops the task.
pub struct Printer {
    handle: PrinterHandle,
    outcomes: mpsc::UnboundedReceiver<JobOutcome>,
    task: Option<JoinHandle<()>>,
}

impl Printer {
    /// Starts the task for the printer at `endpoint`; it asks the printer
    /// for its status at once. Call from within a Tokio runtime.
    pub fn spawn(endpoint: &Endpoint, config: DriverConfig) -> Self {
        let (commands, receiver) = mpsc::unbounded_channel();
        let (state_sender, state) = watch::channel(PrinterState::Unknown);
        let (outcome_sender, outcomes) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(
            endpoint.to_string(),
            Transport::new(endpoint),
            Driver::new(config, Moment::now()),
            receiver,
            state_sender,
            outcome_sender,
        ));
        Self {
            handle: PrinterHandle { commands, state },
            outcomes,
            task: Some(task),
        }
    }

    pub fn handle(&self) -> PrinterHandle {
        self.handle.clone()
    }

    pub fn submit(&self, job: Job) -> Result<(), PrinterStopped> {
        self.handle.submit(job)
    }

    pub fn state(&self) -> PrinterState {
        self.handle.state()
    }

    pub fn watch_state(&self) -> watch::Receiver<PrinterState> {
        self.handle.watch_state()
    }

    /// The next job outcome; `None` once the task has stopped and every
    /// outcome was taken.
    pub async fn next_outcome(&mut self) -> Option<JobOutcome> {
        self.outcomes.recv().await
    }

    /// An outcome already waiting, if any: lets a caller take a burst of
    /// them at once.
    pub fn try_outcome(&mut self) -> Option<JobOutcome> {
        self.outcomes.try_recv().ok()
    }

    /// Stops the task. A job being written is cut off; the caller still
    /// has it as pending and submits it again to the next task.
    pub async fn shutdown(mut self) {
        let _ = self.handle.commands.send(Command::Shutdown);
        if let Some(task) = self.task.take() {
            if let Err(error) = task.await {
                tracing::error!(%error, "printer task failed");
            }
        }
    }
}

impl Drop for Printer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

async fn run(
    endpoint: String,
    transport: Transport,
    mut driver: Driver,
    mut commands: mpsc::UnboundedReceiver<Command>,
    state: watch::Sender<PrinterState>,
    outcomes: mpsc::UnboundedSender<JobOutcome>,
) {
    let mut connection = Connection::Idle;
    let mut timer: Option<Instant> = None;
    loop {
        while let Some(action) = driver.poll_action() {
            match action {
                Action::Connect => connection = Connection::Connecting(transport.connect()),
                Action::Write(data) => connection.write(data),
                Action::Close => connection.close(),
                Action::Abort => connection = Connection::Idle,
                Action::ArmTimer(at) => timer = Some(at),
                Action::StateChanged(new) => {
                    // Ready and Busy alternate with every job: only trouble
                    // is worth a line at the default level.
                    match &new {
                        PrinterState::Faulted { .. } | PrinterState::Unreachable { .. } => {
                            tracing::warn!(%endpoint, state = ?new, "printer state");
                        }
                        _ => tracing::debug!(%endpoint, state = ?new, "printer state"),
                    }
                    state.send_replace(new);
                }
                Action::Job(outcome) => {
                    tracing::debug!(%endpoint, ?outcome, "print job");
                    // Nobody listening means the owner is going away.
                    let _ = outcomes.send(outcome);
                }
            }
        }
        let alarm = async {
            match timer {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => pending().await,
            }
        };
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Submit(job)) => {
                    driver.submit(Moment::now(), job);
                }
                Some(Command::Shutdown) | None => return,
            },
            () = alarm => {
                let now = Moment::now();
                if timer.is_some_and(|at| now.instant >= at) {
                    timer = None;
                }
                driver.timer_fired(now);
            }
            event = connection.next_event() => {
                let now = Moment::now();
                match event {
                    LinkEvent::Connected => driver.connected(now),
                    LinkEvent::Data(bytes) => driver.received(now, &bytes),
                    LinkEvent::WriteFinished => driver.write_finished(now),
                    LinkEvent::Closed => {
                        connection = Connection::Idle;
                        driver.closed(now);
                    }
                    LinkEvent::Lost(reason) => {
                        connection = Connection::Idle;
                        driver.connection_lost(now, &reason);
                    }
                }
            }
        }
    }
}

enum LinkEvent {
    Connected,
    Data(Vec<u8>),
    WriteFinished,
    Closed,
    Lost(String),
}

enum Connection {
    Idle,
    Connecting(Connecting),
    Open(Open),
}

impl Connection {
    fn write(&mut self, data: Vec<u8>) {
        if let Connection::Open(open) = self {
            open.pending.push_back(data);
        }
    }

    fn close(&mut self) {
        if let Connection::Open(open) = self {
            open.close = Close::Asked;
        }
    }

    /// The next thing that happens on the connection. Cancel-safe: every
    /// operation in progress lives in `self`, so a `select!` that drops
    /// this future loses nothing.
    async fn next_event(&mut self) -> LinkEvent {
        match self {
            Connection::Idle => pending().await,
            Connection::Connecting(connecting) => {
                let result = connecting.await;
                match result {
                    Ok(link) => {
                        *self = Connection::Open(Open::new(link));
                        LinkEvent::Connected
                    }
                    Err(error) => {
                        *self = Connection::Idle;
                        LinkEvent::Lost(format!("cannot connect: {error}"))
                    }
                }
            }
            Connection::Open(open) => open.next_event().await,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    NotAsked,
    Asked,
    Finishing,
    /// Our side is shut; the printer's end of stream acknowledges it.
    AwaitingEnd,
}

enum Done {
    Written(io::Result<()>),
    Finished(io::Result<bool>),
}

type Operation = Pin<Box<dyn Future<Output = (LinkWriter, Done)> + Send>>;

struct Open {
    incoming: mpsc::UnboundedReceiver<Incoming>,
    /// `None` while an operation has it.
    writer: Option<LinkWriter>,
    pending: VecDeque<Vec<u8>>,
    close: Close,
    operation: Option<Operation>,
    _reader: Option<ReaderTask>,
}

impl Open {
    fn new(link: Link) -> Self {
        Self {
            incoming: link.incoming,
            writer: Some(link.writer),
            pending: VecDeque::new(),
            close: Close::NotAsked,
            operation: None,
            _reader: link.reader,
        }
    }

    /// Starts the next write, or the close once everything is written.
    fn start_operation(&mut self) {
        if self.operation.is_some() {
            return;
        }
        let Some(mut writer) = self.writer.take() else {
            return;
        };
        if let Some(data) = self.pending.pop_front() {
            self.operation = Some(Box::pin(async move {
                let result = writer.write_all(data).await;
                (writer, Done::Written(result))
            }));
        } else if self.close == Close::Asked {
            self.close = Close::Finishing;
            self.operation = Some(Box::pin(async move {
                let result = writer.finish().await;
                (writer, Done::Finished(result))
            }));
        } else {
            self.writer = Some(writer);
        }
    }

    async fn next_event(&mut self) -> LinkEvent {
        loop {
            self.start_operation();
            let Open {
                incoming,
                operation,
                ..
            } = self;
            let operation_done = async {
                match operation.as_mut() {
                    Some(operation) => operation.await,
                    None => pending().await,
                }
            };
            let (writer, done) = tokio::select! {
                incoming = incoming.recv() => return self.on_incoming(incoming),
                finished = operation_done => finished,
            };
            self.operation = None;
            self.writer = Some(writer);
            match done {
                Done::Written(Ok(())) => return LinkEvent::WriteFinished,
                Done::Written(Err(error)) => {
                    return LinkEvent::Lost(format!("write failed: {error}"));
                }
                Done::Finished(Ok(true)) => return LinkEvent::Closed,
                Done::Finished(Ok(false)) => self.close = Close::AwaitingEnd,
                Done::Finished(Err(error)) => {
                    return LinkEvent::Lost(format!("close failed: {error}"));
                }
            }
        }
    }

    fn on_incoming(&self, incoming: Option<Incoming>) -> LinkEvent {
        match incoming {
            Some(Incoming::Data(bytes)) => LinkEvent::Data(bytes),
            Some(Incoming::Eof) if self.close == Close::AwaitingEnd => LinkEvent::Closed,
            Some(Incoming::Eof) => LinkEvent::Lost("the printer closed the connection".into()),
            Some(Incoming::Error(error)) => LinkEvent::Lost(format!("read failed: {error}")),
            None => LinkEvent::Lost("the connection's reader stopped".into()),
        }
    }
}
