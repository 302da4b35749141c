//! What a connector asks of the platform it speaks to. A platform is the
//! protocol alone: it pulls orders after a position, pushes figures and
//! dispatches; the runner decides what to send, keeps the cursors and
//! retries. To connect a new kind of platform, implement [`Platform`] and
//! add it to [`AnyPlatform`].

use std::fmt;

/// An order as the platform has it, mapped to the body of Depot's order
/// create (`OrderCreate`), and its position: the cursor after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    pub position: String,
    /// The platform's reference, for what is said of an order refused.
    pub reference: String,
    pub body: serde_json::Value,
}

/// What the channel may sell of one item, in the platform's SKU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Figure {
    pub sku: String,
    pub available: i64,
}

/// An order that left the warehouse, as the platform is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// The platform's reference of the order (Depot's `external_ref`).
    pub reference: String,
    pub carrier: String,
    pub tracking_number: String,
}

/// Why a call to the platform failed. Every failure is retried (the
/// cursors do not move past what failed); the message is the
/// connector's `last_error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformError {
    /// No answer: it is down, or the network between.
    Unreachable(String),
    /// It answered with an error.
    Refused {
        call: String,
        status: u16,
        body: String,
    },
    /// It answered something this connector cannot read.
    Unexpected(String),
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreachable(e) => write!(f, "the platform cannot be reached: {e}"),
            Self::Refused { call, status, body } => {
                let body: String = body.chars().take(300).collect();
                write!(f, "{call} answered {status}: {body}")
            }
            Self::Unexpected(e) => write!(f, "the platform answered what cannot be read: {e}"),
        }
    }
}

pub type Result<T> = std::result::Result<T, PlatformError>;

/// One platform's protocol.
#[allow(async_fn_in_trait)] // used through `AnyPlatform`, never as `dyn`
pub trait Platform {
    /// The position of the newest order (where a new connector starts:
    /// a shop's past orders are not the warehouse's to ship).
    async fn newest_order(&mut self) -> Result<String>;

    /// Orders placed after `cursor`, oldest first, each with its
    /// position.
    async fn pull_orders(&mut self, cursor: &str, limit: usize) -> Result<Vec<Incoming>>;

    /// Sets what may be sold of each item. Answers the SKUs the platform
    /// does not have (they are passed over).
    async fn push_figures(&mut self, figures: &[Figure]) -> Result<Vec<String>>;

    /// Tells the platform an order left, with its tracking number; a
    /// dispatch told twice is told once.
    async fn push_dispatch(&mut self, d: &Dispatch) -> Result<()>;
}

/// Every platform a connector can speak to.
pub enum AnyPlatform {
    Oscar(super::oscar::Oscar),
}

impl Platform for AnyPlatform {
    async fn newest_order(&mut self) -> Result<String> {
        match self {
            Self::Oscar(p) => p.newest_order().await,
        }
    }

    async fn pull_orders(&mut self, cursor: &str, limit: usize) -> Result<Vec<Incoming>> {
        match self {
            Self::Oscar(p) => p.pull_orders(cursor, limit).await,
        }
    }

    async fn push_figures(&mut self, figures: &[Figure]) -> Result<Vec<String>> {
        match self {
            Self::Oscar(p) => p.push_figures(figures).await,
        }
    }

    async fn push_dispatch(&mut self, d: &Dispatch) -> Result<()> {
        match self {
            Self::Oscar(p) => p.push_dispatch(d).await,
        }
    }
}
