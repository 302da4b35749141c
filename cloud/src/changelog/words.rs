//! The release-notes page's own words (its title and heading, the labels
//! of its links, what an empty page says, the note on a release shown in
//! another locale), in the reader's language: the language of the page's
//! `locale` when the page has words for it, English otherwise. The notes
//! themselves come in their own locales; these are only the page around
//! them.
//!
//! The page speaks every language the service ships notes in by default
//! (`en`, `es`, `pt-BR`), and French and German besides; a language is
//! matched on its own (`pt-PT` reads the Portuguese, `es-MX` the Spanish).

use depot_protocol::release::{Product, language};

pub struct Words {
    /// The language these words are in: the page's `lang`.
    pub lang: &'static str,
    /// The window's title.
    pub title: &'static str,
    pub heading: &'static str,
    pub product: &'static str,
    /// The link that shows every product.
    pub all: &'static str,
    pub language: &'static str,
    pub feeds: &'static str,
    /// What a page without releases says.
    pub none: &'static str,
    pub newer: &'static str,
    pub older: &'static str,
    /// After a release shown in another locale than the one asked for:
    /// `{shown}` and `{wanted}` are the two locales.
    pub fallback: &'static str,
    /// The warehouse screens' product (the others are names: WMS, App).
    pub signage: &'static str,
}

const EN: Words = Words {
    lang: "en",
    title: "Depot release notes",
    heading: "Release notes",
    product: "Product",
    all: "All",
    language: "Language",
    feeds: "Feeds",
    none: "No releases.",
    newer: "Newer",
    older: "Older",
    fallback: "in {shown} (no {wanted} translation yet)",
    signage: "Signage",
};

const ES: Words = Words {
    lang: "es",
    title: "Novedades de Depot",
    heading: "Novedades de cada versión",
    product: "Producto",
    all: "Todos",
    language: "Idioma",
    feeds: "Canales",
    none: "Ninguna versión.",
    newer: "Más recientes",
    older: "Anteriores",
    fallback: "en {shown} (aún sin traducción a {wanted})",
    signage: "Pantallas",
};

const PT: Words = Words {
    lang: "pt",
    title: "Novidades do Depot",
    heading: "Novidades de cada versão",
    product: "Produto",
    all: "Todos",
    language: "Idioma",
    feeds: "Canais",
    none: "Nenhuma versão.",
    newer: "Mais recentes",
    older: "Anteriores",
    fallback: "em {shown} (ainda sem tradução para {wanted})",
    signage: "Telas",
};

const FR: Words = Words {
    lang: "fr",
    title: "Nouveautés de Depot",
    heading: "Nouveautés de chaque version",
    product: "Produit",
    all: "Tous",
    language: "Langue",
    feeds: "Flux",
    none: "Aucune version.",
    newer: "Plus récentes",
    older: "Plus anciennes",
    fallback: "en {shown} (pas encore traduit en {wanted})",
    signage: "Écrans",
};

const DE: Words = Words {
    lang: "de",
    title: "Depot-Versionshinweise",
    heading: "Versionshinweise",
    product: "Produkt",
    all: "Alle",
    language: "Sprache",
    feeds: "Abonnieren",
    none: "Keine Versionen.",
    newer: "Neuere",
    older: "Ältere",
    fallback: "auf {shown} (noch keine Übersetzung für {wanted})",
    signage: "Bildschirme",
};

/// The words for a canonical locale tag.
pub fn words(locale: &str) -> &'static Words {
    match language(locale) {
        "es" => &ES,
        "pt" => &PT,
        "fr" => &FR,
        "de" => &DE,
        _ => &EN,
    }
}

impl Words {
    pub fn product_label(&self, p: Product) -> &'static str {
        match p {
            Product::Signage => self.signage,
            Product::Wms | Product::App => p.label(),
        }
    }
}

/// A locale's name in its own language, for the language links; the tag
/// itself for one the page has no name for.
pub fn endonym(tag: &str) -> &str {
    match tag {
        "en" => "English",
        "es" => "Español",
        "pt" => "Português",
        "pt-BR" => "Português (Brasil)",
        "pt-PT" => "Português (Portugal)",
        "fr" => "Français",
        "de" => "Deutsch",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_is_matched_on_its_own_and_english_is_the_fallback() {
        for (tag, lang) in [
            ("en", "en"),
            ("en-GB", "en"),
            ("es", "es"),
            ("es-MX", "es"),
            ("pt-BR", "pt"),
            ("pt-PT", "pt"),
            ("fr-CA", "fr"),
            ("de-CH-1996", "de"),
            ("it", "en"),
            ("zh-Hant-TW", "en"),
        ] {
            assert_eq!(words(tag).lang, lang, "{tag}");
        }
    }

    #[test]
    fn every_language_says_both_locales_on_a_fallback() {
        for w in [&EN, &ES, &PT, &FR, &DE] {
            assert!(
                w.fallback.contains("{shown}") && w.fallback.contains("{wanted}"),
                "{}",
                w.lang
            );
        }
    }
}
