//! The `~HS` (host status return) answer.
//!
//! Layout from the ZPL II Programming Guide, `~HS`: three strings, each
//! `<STX>…<ETX><CR><LF>`:
//!
//! 1. `aaa,b,c,dddd,eee,f,g,h,iii,j,k,l`: interface settings, paper out,
//!    pause, label length (dots), formats in the receive buffer, buffer
//!    full, communications diagnostic mode, partial format, unused, corrupt
//!    RAM, under temperature, over temperature;
//! 2. `mmm,n,o,p,q,r,s,t,uuuuuuuu,v,www`: function settings, unused, head
//!    up, ribbon out, thermal transfer mode, print mode, print width mode,
//!    label waiting (peel-off), labels remaining in the batch, format while
//!    printing, graphics stored;
//! 3. `xxxx,y`: the ZPL password, static RAM installed.
//!
//! The same guide warns that a printer may not answer at all while out of
//! media or ribbon, with its head open, its rewinder full or its head too
//! hot. Fields past the documented ones are accepted and ignored, so newer
//! firmware that appends fields still parses.

use serde::{Deserialize, Serialize};

use super::frame::{self, ETX, STX};
use super::{Problem, StatusError};

const MAX_FRAME: usize = 256;

/// A decoded `~HS` answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrinterStatus {
    /// `aaa`: baud rate, parity, data/stop bits and handshake, bit-packed.
    pub interface_settings: u16,
    pub paper_out: bool,
    pub paused: bool,
    pub label_length_dots: u32,
    pub formats_in_buffer: u32,
    pub buffer_full: bool,
    pub diagnostic_mode: bool,
    pub partial_format: bool,
    /// Configuration data lost: the printer runs on defaults.
    pub corrupt_ram: bool,
    pub under_temperature: bool,
    pub over_temperature: bool,
    /// `mmm`: media type, sensor profile and diagnostics, bit-packed.
    pub function_settings: u16,
    pub head_open: bool,
    pub ribbon_out: bool,
    pub thermal_transfer: bool,
    /// 0 rewind, 1 peel-off, 2 tear-off, 3 cutter, 4 applicator, 5 delayed
    /// cut; later firmware adds more.
    pub print_mode: u8,
    pub print_width_mode: u8,
    pub label_waiting: bool,
    pub labels_remaining: u32,
    pub format_while_printing: bool,
    pub graphics_stored: u32,
    pub static_ram_installed: bool,
}

struct Fields<'a> {
    string: usize,
    values: Vec<&'a str>,
}

impl<'a> Fields<'a> {
    fn new(string: usize, body: &'a [u8], expected: usize) -> Result<Self, StatusError> {
        let text = std::str::from_utf8(body).map_err(|_| StatusError::Field {
            string,
            field: "string",
            value: String::from_utf8_lossy(body).into_owned(),
            expected: "ASCII",
        })?;
        let values: Vec<&str> = text.split(',').map(str::trim).collect();
        if values.len() < expected {
            return Err(StatusError::FieldCount {
                string,
                expected,
                got: values.len(),
            });
        }
        Ok(Self { string, values })
    }

    fn error(&self, index: usize, field: &'static str, expected: &'static str) -> StatusError {
        StatusError::Field {
            string: self.string,
            field,
            value: self.values[index].to_owned(),
            expected,
        }
    }

    fn number<T: std::str::FromStr>(
        &self,
        index: usize,
        field: &'static str,
    ) -> Result<T, StatusError> {
        let value = self.values[index];
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.error(index, field, "a number"));
        }
        value
            .parse()
            .map_err(|_| self.error(index, field, "a number in range"))
    }

    fn flag(&self, index: usize, field: &'static str) -> Result<bool, StatusError> {
        match self.values[index] {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(self.error(index, field, "0 or 1")),
        }
    }
}

impl PrinterStatus {
    /// Parses one `~HS` answer from the start of `input`, returning it and
    /// the bytes consumed. [`StatusError::Incomplete`] asks for more input.
    pub fn parse(input: &[u8]) -> Result<(Self, usize), StatusError> {
        let (frames, used) = frame::split(input, 3, MAX_FRAME)?;
        let one = Fields::new(1, frames[0], 12)?;
        let two = Fields::new(2, frames[1], 11)?;
        let three = Fields::new(3, frames[2], 2)?;
        // Field 3.0 is the ZPL password: checked for shape, never kept nor
        // quoted in an error.
        if three.number::<u16>(0, "password").is_err() {
            return Err(StatusError::Field {
                string: 3,
                field: "password",
                value: "(withheld)".into(),
                expected: "a number",
            });
        }
        let status = PrinterStatus {
            interface_settings: one.number(0, "interface settings")?,
            paper_out: one.flag(1, "paper out")?,
            paused: one.flag(2, "pause")?,
            label_length_dots: one.number(3, "label length")?,
            formats_in_buffer: one.number(4, "formats in buffer")?,
            buffer_full: one.flag(5, "buffer full")?,
            diagnostic_mode: one.flag(6, "diagnostic mode")?,
            partial_format: one.flag(7, "partial format")?,
            corrupt_ram: one.flag(9, "corrupt RAM")?,
            under_temperature: one.flag(10, "under temperature")?,
            over_temperature: one.flag(11, "over temperature")?,
            function_settings: two.number(0, "function settings")?,
            head_open: two.flag(2, "head up")?,
            ribbon_out: two.flag(3, "ribbon out")?,
            thermal_transfer: two.flag(4, "thermal transfer")?,
            print_mode: two.number(5, "print mode")?,
            print_width_mode: two.number(6, "print width mode")?,
            label_waiting: two.flag(7, "label waiting")?,
            labels_remaining: two.number(8, "labels remaining")?,
            format_while_printing: two.flag(9, "format while printing")?,
            graphics_stored: two.number(10, "graphics stored")?,
            static_ram_installed: three.flag(1, "static RAM")?,
        };
        // Field 1.8 is documented as unused (always 000); still a number.
        one.number::<u32>(8, "unused")?;
        Ok((status, used))
    }

    /// What keeps this printer from printing, in a stable order.
    pub fn problems(&self) -> Vec<Problem> {
        // A ribbon sensor means nothing in direct thermal mode; a printer
        // that reports ribbon out there must not block every job.
        let ribbon_out = self.ribbon_out && self.thermal_transfer;
        [
            (self.paper_out, Problem::PaperOut),
            (ribbon_out, Problem::RibbonOut),
            (self.head_open, Problem::HeadOpen),
            (self.paused, Problem::Paused),
            (self.under_temperature, Problem::UnderTemperature),
            (self.over_temperature, Problem::OverTemperature),
            (self.diagnostic_mode, Problem::DiagnosticMode),
        ]
        .into_iter()
        .filter_map(|(set, problem)| set.then_some(problem))
        .collect()
    }

    pub fn is_ready(&self) -> bool {
        self.problems().is_empty()
    }

    /// The printer still has work of its own: formats waiting in its buffer
    /// or labels of a batch left to print.
    pub fn has_work(&self) -> bool {
        self.formats_in_buffer > 0 || self.labels_remaining > 0
    }

    /// The answer a printer in this state sends, as the simulator needs it.
    pub fn encode(&self) -> Vec<u8> {
        let flag = |b: bool| if b { '1' } else { '0' };
        let strings = [
            format!(
                "{:03},{},{},{:04},{:03},{},{},{},000,{},{},{}",
                self.interface_settings,
                flag(self.paper_out),
                flag(self.paused),
                self.label_length_dots,
                self.formats_in_buffer,
                flag(self.buffer_full),
                flag(self.diagnostic_mode),
                flag(self.partial_format),
                flag(self.corrupt_ram),
                flag(self.under_temperature),
                flag(self.over_temperature),
            ),
            format!(
                "{:03},0,{},{},{},{},{},{},{:08},{},{:03}",
                self.function_settings,
                flag(self.head_open),
                flag(self.ribbon_out),
                flag(self.thermal_transfer),
                self.print_mode,
                self.print_width_mode,
                flag(self.label_waiting),
                self.labels_remaining,
                flag(self.format_while_printing),
                self.graphics_stored,
            ),
            format!("1234,{}", flag(self.static_ram_installed)),
        ];
        let mut out = Vec::new();
        for string in strings {
            out.push(STX);
            out.extend(string.into_bytes());
            out.extend([ETX, b'\r', b'\n']);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ZD420 class printer, idle, with paper: the shape printers send.
    const READY: &[u8] = b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n\
                           \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                           \x021234,0\x03\r\n";

    fn parse(input: &[u8]) -> Result<PrinterStatus, StatusError> {
        PrinterStatus::parse(input).map(|(status, _)| status)
    }

    #[test]
    fn ready_printer() {
        let (status, used) = PrinterStatus::parse(READY).expect("valid answer");
        assert_eq!(used, READY.len());
        assert!(status.is_ready());
        assert!(!status.has_work());
        assert_eq!(status.interface_settings, 30);
        assert_eq!(status.label_length_dots, 1218);
        assert_eq!(status.print_mode, 2);
        assert_eq!(status.print_width_mode, 6);
        assert!(status.thermal_transfer);
        assert!(status.format_while_printing);
    }

    #[test]
    fn paper_out_and_paused() {
        let input = b"\x02030,1,1,1218,002,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,0,0,2,6,0,00000003,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        let status = parse(input).expect("valid answer");
        assert_eq!(status.problems(), vec![Problem::PaperOut, Problem::Paused]);
        assert_eq!(status.formats_in_buffer, 2);
        assert_eq!(status.labels_remaining, 3);
        assert!(status.has_work());
        assert!(!status.is_ready());
    }

    #[test]
    fn head_open_ribbon_out_and_temperatures() {
        let input = b"\x02030,0,0,1218,000,1,1,1,000,1,1,1\x03\r\n\
                      \x02001,0,1,1,1,2,6,1,00000000,1,002\x03\r\n\
                      \x021234,1\x03\r\n";
        let status = parse(input).expect("valid answer");
        assert_eq!(
            status.problems(),
            vec![
                Problem::RibbonOut,
                Problem::HeadOpen,
                Problem::UnderTemperature,
                Problem::OverTemperature,
                Problem::DiagnosticMode
            ]
        );
        assert!(status.buffer_full && status.partial_format && status.corrupt_ram);
        assert!(status.label_waiting && status.static_ram_installed);
        assert_eq!(status.graphics_stored, 2);
    }

    #[test]
    fn ribbon_out_is_ignored_in_direct_thermal_mode() {
        let input = b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,1,0,2,6,0,00000000,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        let status = parse(input).expect("valid answer");
        assert!(status.ribbon_out);
        assert!(status.is_ready());
    }

    #[test]
    fn every_truncation_is_incomplete() {
        for end in 0..READY.len() - 2 {
            assert_eq!(
                parse(&READY[..end]),
                Err(StatusError::Incomplete),
                "cut at {end}"
            );
        }
        // The final CR LF is optional: it may come in the next read.
        assert!(parse(&READY[..READY.len() - 2]).is_ok());
    }

    #[test]
    fn garbage_before_stx_and_blank_lines_are_skipped() {
        let mut input = b"\x00\r\nOK\r\n".to_vec();
        input.extend(READY.iter().flat_map(|&b| {
            if b == STX {
                vec![b'\r', b'\n', b' ', STX]
            } else {
                vec![b]
            }
        }));
        assert!(parse(&input).expect("valid answer").is_ready());
    }

    #[test]
    fn spaces_around_fields_are_tolerated() {
        let input = b"\x02 030, 0,0,1218,000,0,0,0,000,0,0,0 \x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        assert!(parse(input).expect("valid answer").is_ready());
    }

    #[test]
    fn extra_fields_are_ignored() {
        let input = b"\x02030,0,0,1218,000,0,0,0,000,0,0,0,9\x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000,7,7\x03\r\n\
                      \x021234,0,5\x03\r\n";
        assert!(parse(input).expect("valid answer").is_ready());
    }

    #[test]
    fn consumed_length_leaves_the_next_answer() {
        let mut input = READY.to_vec();
        input.extend_from_slice(READY);
        let (_, used) = PrinterStatus::parse(&input).expect("valid answer");
        assert_eq!(used, READY.len());
        assert!(parse(&input[used..]).is_ok());
    }

    #[test]
    fn missing_fields() {
        let input = b"\x02030,0,0,1218\x03\r\n\x02001\x03\r\n\x021234,0\x03\r\n";
        assert_eq!(
            parse(input),
            Err(StatusError::FieldCount {
                string: 1,
                expected: 12,
                got: 4
            })
        );
    }

    #[test]
    fn bad_flag_and_bad_number() {
        let input = b"\x02030,2,0,1218,000,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        assert!(matches!(
            parse(input),
            Err(StatusError::Field {
                string: 1,
                field: "paper out",
                ..
            })
        ));
        let input = b"\x02030,0,0,12x8,000,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        assert!(matches!(
            parse(input),
            Err(StatusError::Field {
                field: "label length",
                ..
            })
        ));
        let input = b"\x02030,0,0,99999999999,000,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                      \x021234,0\x03\r\n";
        assert!(matches!(
            parse(input),
            Err(StatusError::Field {
                expected: "a number in range",
                ..
            })
        ));
    }

    #[test]
    fn a_malformed_password_is_not_quoted() {
        let input = b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n\
                      \x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n\
                      \x02secret,0\x03\r\n";
        let error = parse(input).expect_err("not a number");
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    #[test]
    fn non_ascii_field() {
        let input = b"\x02030,\xff,0\x03\x02\x03\x02\x03";
        assert!(matches!(
            parse(input),
            Err(StatusError::Field {
                field: "string",
                ..
            })
        ));
    }

    #[test]
    fn an_extended_status_answer_is_not_a_host_status() {
        let hqes = b"\x02\r\nPRINTER STATUS\r\n   ERRORS:         0 00000000 00000000\r\n\x03\r\n";
        assert!(parse(hqes).is_err());
    }

    #[test]
    fn encode_round_trips() {
        let status = PrinterStatus {
            interface_settings: 30,
            paper_out: true,
            head_open: true,
            formats_in_buffer: 3,
            labels_remaining: 12,
            label_length_dots: 1218,
            thermal_transfer: true,
            ..PrinterStatus::default()
        };
        let bytes = status.encode();
        let (parsed, used) = PrinterStatus::parse(&bytes).expect("own encoding parses");
        assert_eq!(parsed, status);
        assert_eq!(used, bytes.len());
    }
}
