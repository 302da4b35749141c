//! Keyboard-wedge scanners: USB scanners that present themselves as a boot
//! keyboard and type the barcode, followed by a terminator key.
//!
//! The decoder reads the raw 8-byte boot keyboard input reports (modifier
//! bits, a reserved byte, up to six pressed key usages) and turns key presses
//! into text itself, on a US layout, so a scan does not depend on the host's
//! keyboard layout. Control characters, GS above all, arrive either as
//! Alt+keypad codes (Alt held, keypad 0 0 2 9, Alt released) or as Ctrl
//! combinations (Ctrl+] for GS); both are decoded.

mod keymap;
#[cfg(test)]
mod tests;

use std::mem;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{Decoded, MAX_SCAN_BYTES};

pub(crate) use keymap::{ENTER, TAB, ctrl_key_for, key_for, keypad_key_for};
use keymap::{KEYPAD_ENTER, char_for, ctrl_char_for, keypad_digit};

/// Modifier bits of the first report byte.
pub const LEFT_CTRL: u8 = 0x01;
pub const LEFT_SHIFT: u8 = 0x02;
pub const LEFT_ALT: u8 = 0x04;
pub const RIGHT_CTRL: u8 = 0x10;
pub const RIGHT_SHIFT: u8 = 0x20;
pub const RIGHT_ALT: u8 = 0x40;
const CTRL: u8 = LEFT_CTRL | RIGHT_CTRL;
const SHIFT: u8 = LEFT_SHIFT | RIGHT_SHIFT;
const ALT: u8 = LEFT_ALT | RIGHT_ALT;

/// One boot-protocol keyboard input report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BootReport {
    pub modifiers: u8,
    /// Usages of the keys held down, in slot order; 0 is an empty slot.
    pub keys: [u8; 6],
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ReportError {
    #[error("keyboard report is {0} bytes long: expected 8, or 9 with a report id")]
    Length(usize),
}

impl BootReport {
    pub const LEN: usize = 8;

    /// Parses a report as read from the device. A device whose descriptor
    /// numbers its reports (composite scanners do) prefixes the report id,
    /// making it 9 bytes; that byte is dropped.
    pub fn parse(bytes: &[u8]) -> Result<Self, ReportError> {
        let body = match bytes.len() {
            8 => bytes,
            9 => &bytes[1..],
            len => return Err(ReportError::Length(len)),
        };
        let mut keys = [0; 6];
        keys.copy_from_slice(&body[2..]);
        Ok(Self {
            modifiers: body[0],
            keys,
        })
    }

    pub fn to_bytes(&self) -> [u8; Self::LEN] {
        let mut bytes = [0; Self::LEN];
        bytes[0] = self.modifiers;
        bytes[2..].copy_from_slice(&self.keys);
        bytes
    }

    /// ErrorRollOver (0x01), POSTFail (0x02) and ErrorUndefined (0x03) fill
    /// every slot when the keyboard cannot tell which keys are down: such a
    /// report says nothing about presses and must not count as releases.
    fn is_error(&self) -> bool {
        self.keys.iter().any(|&usage| matches!(usage, 0x01..=0x03))
    }
}

/// What ends a scan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Terminator {
    /// The Enter key (main or keypad), the factory suffix of most scanners.
    #[default]
    Enter,
    Tab,
    /// No terminator key: a scan ends when no key has been pressed for
    /// `idle_ms`. Enter and Tab are then part of the text, as CR and HT.
    Timeout {
        idle_ms: u64,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WedgeConfig {
    pub terminator: Terminator,
    /// The scanner is configured to prefix each scan with its AIM symbology
    /// identifier, which is then split off into [`Decoded::symbology`].
    pub aim_prefix: bool,
}

/// Counts of what the decoder dropped, for diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WedgeStats {
    /// Key presses that type nothing known (function keys, Ctrl or Alt with
    /// a key that makes no character, …).
    pub unknown_usages: u64,
    /// Rollover and other error reports.
    pub error_reports: u64,
    /// Scans longer than [`MAX_SCAN_BYTES`], dropped whole.
    pub overlong_scans: u64,
    /// Alt+keypad codes outside ASCII and Latin-1.
    pub bad_alt_codes: u64,
}

/// The digits typed on the keypad while Alt is held.
#[derive(Clone, Copy, Debug, Default)]
struct AltCode {
    value: u32,
    digits: u8,
}

impl AltCode {
    fn push(&mut self, digit: u8) {
        self.digits = self.digits.saturating_add(1);
        self.value = self
            .value
            .saturating_mul(10)
            .saturating_add(u32::from(digit));
    }

    /// Windows' convention: up to three digits is a code in the OEM code
    /// page, four digits with a leading zero one in Windows-1252. Both agree
    /// with ASCII below 128, and Windows-1252 with Latin-1 from 160; the
    /// rest needs code page tables no scanner setup calls for.
    fn char(self) -> Option<char> {
        let byte = u8::try_from(self.value).ok()?;
        match (self.digits, byte) {
            (1..=4, 0x01..=0x7F) => Some(char::from(byte)),
            (4, 0xA0..=0xFF) => Some(char::from(byte)),
            _ => None,
        }
    }
}

/// The keyboard-wedge decoder: a pure state machine fed with reports and the
/// time they arrived.
#[derive(Debug)]
pub struct WedgeDecoder {
    config: WedgeConfig,
    pressed: [u8; 6],
    /// `Some` while Alt is held.
    alt_code: Option<AltCode>,
    text: String,
    overflow: bool,
    last_key_at: Option<Instant>,
    stats: WedgeStats,
}

impl WedgeDecoder {
    pub fn new(config: WedgeConfig) -> Self {
        Self {
            config,
            pressed: [0; 6],
            alt_code: None,
            text: String::new(),
            overflow: false,
            last_key_at: None,
            stats: WedgeStats::default(),
        }
    }

    pub fn stats(&self) -> WedgeStats {
        self.stats
    }

    /// Takes one report and the time it arrived. Returns a scan when the
    /// report ends one, or, with a timeout terminator, when the pause before
    /// it already had.
    pub fn feed(&mut self, report: &BootReport, now: Instant) -> Option<Decoded> {
        if report.is_error() {
            self.stats.error_reports += 1;
            return None;
        }
        let mut done = self.poll(now);

        let alt = report.modifiers & ALT != 0;
        match (alt, self.alt_code) {
            (false, Some(code)) => {
                self.alt_code = None;
                self.finish_alt_code(code);
            }
            (true, None) => self.alt_code = Some(AltCode::default()),
            _ => {}
        }
        let shift = report.modifiers & SHIFT != 0;
        let ctrl = report.modifiers & CTRL != 0;

        // A key is pressed when it appears in a report; it stays in the
        // following reports while held, so only new usages count, and typing
        // the same character twice needs a report without it in between.
        let before = self.pressed;
        for &usage in &report.keys {
            if usage == 0 || before.contains(&usage) {
                continue;
            }
            self.last_key_at = Some(now);
            if let Some(scan) = self.press(usage, shift, ctrl) {
                done.get_or_insert(scan);
            }
        }
        self.pressed = report.keys;
        done
    }

    /// Ends a scan whose idle timeout has passed (timeout terminator only).
    pub fn poll(&mut self, now: Instant) -> Option<Decoded> {
        match self.next_deadline() {
            Some(deadline) if now >= deadline => self.finish(),
            _ => None,
        }
    }

    /// When [`poll`](Self::poll) should next be called, if ever.
    pub fn next_deadline(&self) -> Option<Instant> {
        let Terminator::Timeout { idle_ms } = self.config.terminator else {
            return None;
        };
        if self.text.is_empty() && !self.overflow {
            return None;
        }
        self.last_key_at
            .map(|at| at + Duration::from_millis(idle_ms))
    }

    fn press(&mut self, usage: u8, shift: bool, ctrl: bool) -> Option<Decoded> {
        if let Some(code) = &mut self.alt_code {
            match keypad_digit(usage) {
                Some(digit) => code.push(digit),
                None => self.stats.unknown_usages += 1,
            }
            return None;
        }
        if ctrl {
            match ctrl_char_for(usage) {
                Some(c) => self.push(c),
                None => self.stats.unknown_usages += 1,
            }
            return None;
        }
        match (usage, &self.config.terminator) {
            (ENTER | KEYPAD_ENTER, Terminator::Enter) | (TAB, Terminator::Tab) => {
                return self.finish();
            }
            (ENTER | KEYPAD_ENTER, _) => self.push('\r'),
            (TAB, _) => self.push('\t'),
            _ => match char_for(usage, shift) {
                Some(c) => self.push(c),
                None => self.stats.unknown_usages += 1,
            },
        }
        None
    }

    fn finish_alt_code(&mut self, code: AltCode) {
        if code.digits == 0 {
            return;
        }
        match code.char() {
            Some(c) => self.push(c),
            None => self.stats.bad_alt_codes += 1,
        }
    }

    fn push(&mut self, c: char) {
        if self.text.len() + c.len_utf8() > MAX_SCAN_BYTES {
            self.overflow = true;
        } else {
            self.text.push(c);
        }
    }

    fn finish(&mut self) -> Option<Decoded> {
        let text = mem::take(&mut self.text);
        if mem::take(&mut self.overflow) {
            self.stats.overlong_scans += 1;
            tracing::warn!(
                limit = MAX_SCAN_BYTES,
                "keyboard scan longer than the limit dropped"
            );
            return None;
        }
        if text.is_empty() {
            return None;
        }
        Some(Decoded::from_text(text, self.config.aim_prefix))
    }
}
