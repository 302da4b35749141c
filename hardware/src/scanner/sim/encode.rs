//! What a scanner sends for a barcode: keyboard reports, HID-POS reports and
//! serial lines. The inverse of the decoders, for the simulator and tests.

use thiserror::Error;

use crate::scanner::hidpos::{MAX_DATA_PER_REPORT, REPORT_LEN, SCANNED_DATA_REPORT_ID};
use crate::scanner::serial::LineEnding;
use crate::scanner::wedge::{
    BootReport, ENTER, LEFT_ALT, LEFT_CTRL, LEFT_SHIFT, TAB, Terminator, ctrl_key_for, key_for,
    keypad_key_for,
};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum EncodeError {
    #[error("{0:?} cannot be typed by a keyboard-wedge scanner")]
    Untypable(char),
    #[error("AIM identifier {0:?} is not `]` and two characters")]
    Aim(String),
}

/// How a keyboard-wedge scanner types control characters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ControlKeys {
    /// Alt held, the four-digit code on the keypad (Alt+0029 for GS).
    #[default]
    AltKeypad,
    /// Ctrl with the key of the caret notation (Ctrl+] for GS) for C0
    /// controls; Alt+keypad for DEL and Latin-1.
    Ctrl,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WedgeEncoding {
    pub terminator: Terminator,
    pub control: ControlKeys,
}

/// The reports a keyboard-wedge scanner sends to type `text` and its
/// terminator: each key pressed then released, Shift held in the press
/// report for shifted characters.
pub fn wedge_reports(text: &str, encoding: &WedgeEncoding) -> Result<Vec<BootReport>, EncodeError> {
    let mut reports = Vec::new();
    for c in text.chars() {
        if let Some((usage, shift)) = key_for(c) {
            tap(&mut reports, if shift { LEFT_SHIFT } else { 0 }, usage);
            continue;
        }
        let ctrl = match encoding.control {
            ControlKeys::Ctrl => ctrl_key_for(c),
            ControlKeys::AltKeypad => None,
        };
        if let Some((usage, shift)) = ctrl {
            tap(
                &mut reports,
                LEFT_CTRL | if shift { LEFT_SHIFT } else { 0 },
                usage,
            );
            continue;
        }
        let code = u8::try_from(c)
            .ok()
            .filter(|&b| matches!(b, 0x01..=0x7F | 0xA0..=0xFF))
            .ok_or(EncodeError::Untypable(c))?;
        reports.push(key(LEFT_ALT, 0));
        for digit in [0, code / 100, code / 10 % 10, code % 10] {
            let usage = keypad_key_for(digit).ok_or(EncodeError::Untypable(c))?;
            tap(&mut reports, LEFT_ALT, usage);
        }
        reports.push(key(0, 0));
    }
    match encoding.terminator {
        Terminator::Enter => tap(&mut reports, 0, ENTER),
        Terminator::Tab => tap(&mut reports, 0, TAB),
        Terminator::Timeout { .. } => {}
    }
    Ok(reports)
}

/// A key press and its release; Alt stays held through an Alt+keypad code.
fn tap(reports: &mut Vec<BootReport>, modifiers: u8, usage: u8) {
    reports.push(key(modifiers, usage));
    reports.push(key(modifiers & LEFT_ALT, 0));
}

fn key(modifiers: u8, usage: u8) -> BootReport {
    BootReport {
        modifiers,
        keys: [usage, 0, 0, 0, 0, 0],
    }
}

/// The 64-byte Scanned Data Reports a HID-POS scanner sends for `data`, in
/// the layout [`crate::scanner::hidpos`] documents.
pub fn hidpos_reports(
    data: &[u8],
    aim: Option<&str>,
) -> Result<Vec<[u8; REPORT_LEN]>, EncodeError> {
    let aim: [u8; 3] = match aim {
        None => [0; 3],
        Some(id) => id
            .as_bytes()
            .try_into()
            .ok()
            .filter(|id: &[u8; 3]| id[0] == b']')
            .ok_or_else(|| EncodeError::Aim(id.to_owned()))?,
    };
    let mut chunks: Vec<&[u8]> = data.chunks(MAX_DATA_PER_REPORT).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    let last = chunks.len() - 1;
    Ok(chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut report = [0; REPORT_LEN];
            report[0] = SCANNED_DATA_REPORT_ID;
            // `chunks` caps each at 56 bytes.
            report[1] = u8::try_from(chunk.len()).unwrap_or(u8::MAX);
            report[2..5].copy_from_slice(&aim);
            report[5..5 + chunk.len()].copy_from_slice(chunk);
            report[63] = u8::from(i != last);
            report
        })
        .collect())
}

/// The bytes a serial scanner sends for one scan: optional AIM prefix, the
/// text, the line ending.
pub fn serial_line(text: &str, aim: Option<&str>, ending: LineEnding) -> Vec<u8> {
    let mut line = Vec::with_capacity(text.len() + 5);
    line.extend_from_slice(aim.unwrap_or_default().as_bytes());
    line.extend_from_slice(text.as_bytes());
    line.extend_from_slice(ending.as_bytes());
    line
}
