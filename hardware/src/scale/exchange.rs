//! One command at a time, each with a deadline.
//!
//! Serial scales answer in order and do not tag answers with a request id, so
//! a second command sent before the first is answered (or given up on) would
//! make the answers ambiguous. After a timeout the command is forgotten: an
//! answer arriving later no longer matches anything and the session drops it.

use std::time::Instant;

use super::ScaleError;

#[derive(Debug)]
pub(crate) struct Exchange<C> {
    pending: Option<(C, Instant)>,
}

impl<C: Copy> Exchange<C> {
    pub(crate) fn new() -> Self {
        Self { pending: None }
    }

    pub(crate) fn start(&mut self, command: C, deadline: Instant) -> Result<(), ScaleError> {
        if self.pending.is_some() {
            return Err(ScaleError::Busy);
        }
        self.pending = Some((command, deadline));
        Ok(())
    }

    pub(crate) fn pending(&self) -> Option<C> {
        self.pending.map(|(command, _)| command)
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.pending.map(|(_, deadline)| deadline)
    }

    pub(crate) fn finish(&mut self) -> Option<C> {
        self.pending.take().map(|(command, _)| command)
    }

    /// The pending command, if its deadline has passed (it is then dropped).
    pub(crate) fn expire(&mut self, now: Instant) -> Option<C> {
        match self.pending {
            Some((command, deadline)) if now >= deadline => {
                self.pending = None;
                Some(command)
            }
            _ => None,
        }
    }
}
