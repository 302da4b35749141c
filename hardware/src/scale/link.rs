//! Polled serial protocols seen the same way by the driver: operations in,
//! scale states and command results out.

use std::time::{Instant, SystemTime};

use super::{
    Reading, ScaleError, ScaleState, Unit,
    sics::{self, Command as Sics},
    toledo::{self, Command as Toledo},
};

/// What the driver asks of a scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Poll,
    Zero,
    Tare,
}

impl Op {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Poll => "weigh",
            Self::Zero => "zero",
            Self::Tare => "tare",
        }
    }
}

#[derive(Debug)]
pub(crate) enum Outcome {
    Poll(ScaleState),
    Zero(Result<(), ScaleError>),
    Tare(Result<Reading, ScaleError>),
}

pub(crate) trait Link {
    /// Bytes to write for `op`, or why it cannot be done.
    fn send(&mut self, op: Op, deadline: Instant) -> Result<Vec<u8>, ScaleError>;
    fn receive(&mut self, bytes: &[u8]) -> Vec<Outcome>;
    fn expire(&mut self, now: Instant) -> Option<Outcome>;
    fn deadline(&self) -> Option<Instant>;
    fn is_idle(&self) -> bool;
}

fn unexpected(answer: impl std::fmt::Debug) -> ScaleError {
    ScaleError::Malformed(format!("unexpected answer {answer:?}"))
}

fn reading(weight: super::Weight, unit: Unit, stable: bool) -> Reading {
    Reading {
        weight,
        unit,
        stable,
        at: SystemTime::now(),
    }
}

#[derive(Debug, Default)]
pub(crate) struct SicsLink(sics::Session);

impl SicsLink {
    fn outcome(answer: sics::Answer) -> Outcome {
        use sics::Response;
        match answer.command {
            Sics::Zero => Outcome::Zero(answer.result.and_then(|r| match r {
                Response::Zeroed => Ok(()),
                other => Err(unexpected(other)),
            })),
            Sics::Tare => Outcome::Tare(answer.result.and_then(|r| match r {
                Response::Tared { weight, unit } => Ok(reading(weight, unit, true)),
                other => Err(unexpected(other)),
            })),
            _ => Outcome::Poll(match answer.result {
                Ok(Response::Weight {
                    weight,
                    unit,
                    stable,
                }) => ScaleState::Weight(reading(weight, unit, stable)),
                Ok(other) => ScaleState::fault(unexpected(other)),
                Err(error) => ScaleState::fault(error),
            }),
        }
    }
}

impl Link for SicsLink {
    fn send(&mut self, op: Op, deadline: Instant) -> Result<Vec<u8>, ScaleError> {
        let command = match op {
            Op::Poll => Sics::WeighImmediately,
            Op::Zero => Sics::Zero,
            Op::Tare => Sics::Tare,
        };
        self.0.request(command, deadline)
    }

    fn receive(&mut self, bytes: &[u8]) -> Vec<Outcome> {
        self.0
            .receive(bytes)
            .into_iter()
            .map(Self::outcome)
            .collect()
    }

    fn expire(&mut self, now: Instant) -> Option<Outcome> {
        self.0.expire(now).map(Self::outcome)
    }

    fn deadline(&self) -> Option<Instant> {
        self.0.deadline()
    }

    fn is_idle(&self) -> bool {
        self.0.is_idle()
    }
}

#[derive(Debug)]
pub(crate) struct ToledoLink {
    session: toledo::Session,
    unit: Unit,
}

impl ToledoLink {
    pub(crate) fn new(unit: Unit) -> Self {
        Self {
            session: toledo::Session::new(),
            unit,
        }
    }

    fn outcome(&self, answer: toledo::Answer) -> Outcome {
        use toledo::Response;
        match answer.command {
            Toledo::Zero => Outcome::Zero(answer.result.and_then(|r| match r {
                Response::Status(s) if s.center_of_zero() && !s.motion() => Ok(()),
                Response::Status(s) => Err(s.error().unwrap_or(ScaleError::NotExecutable {
                    command: Toledo::Zero.name(),
                })),
                other => Err(unexpected(other)),
            })),
            _ => Outcome::Poll(match answer.result {
                // 8217 sends a weight only when it is valid, motion included.
                Ok(Response::Weight(weight)) => {
                    ScaleState::Weight(reading(weight, self.unit, true))
                }
                Ok(Response::Status(status)) => match status.error() {
                    Some(error) => ScaleState::fault(error),
                    None if status.motion() => ScaleState::Motion {
                        at: SystemTime::now(),
                    },
                    None => ScaleState::fault(ScaleError::Malformed(format!(
                        "status {:#04x} instead of a weight",
                        status.byte()
                    ))),
                },
                Err(error) => ScaleState::fault(error),
            }),
        }
    }
}

impl Link for ToledoLink {
    fn send(&mut self, op: Op, deadline: Instant) -> Result<Vec<u8>, ScaleError> {
        let command = match op {
            Op::Poll => Toledo::Weigh,
            Op::Zero => Toledo::Zero,
            Op::Tare => {
                return Err(ScaleError::Unsupported {
                    operation: op.name(),
                    protocol: "Toledo 8217",
                });
            }
        };
        self.session.request(command, deadline)
    }

    fn receive(&mut self, bytes: &[u8]) -> Vec<Outcome> {
        let answers = self.session.receive(bytes);
        answers.into_iter().map(|a| self.outcome(a)).collect()
    }

    fn expire(&mut self, now: Instant) -> Option<Outcome> {
        let answer = self.session.expire(now)?;
        Some(self.outcome(answer))
    }

    fn deadline(&self) -> Option<Instant> {
        self.session.deadline()
    }

    fn is_idle(&self) -> bool {
        self.session.is_idle()
    }
}
