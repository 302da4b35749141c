//! Buyers and addresses of the demo's orders, and its warehouses': complete
//! and as people in each country write them, in their own scripts, so the
//! demo's labels look like the ones a warehouse in Europe prints every day.

use depot_protocol::order::Address;

fn address(
    name: &str,
    line1: &str,
    postal_code: Option<&str>,
    city: &str,
    region: Option<&str>,
    country: &str,
) -> Address {
    Address {
        name: Some(name.into()),
        line1: Some(line1.into()),
        line2: None,
        city: Some(city.into()),
        region: region.map(Into::into),
        postal_code: postal_code.map(Into::into),
        country: Some(country.into()),
    }
}

/// Where the demo business ships from.
pub fn madrid() -> Address {
    address(
        "Depot Demo S.L.",
        "Calle de la Logística 14, Nave 3",
        Some("28906"),
        "Getafe",
        Some("Madrid"),
        "ES",
    )
}

pub fn barcelona() -> Address {
    address(
        "Depot Demo S.L.",
        "Carrer del Foc 68",
        Some("08038"),
        "Barcelona",
        Some("Barcelona"),
        "ES",
    )
}

/// The demo's buyers, each at home: every one passes its country's
/// address rules (a test checks).
pub fn buyers() -> Vec<Address> {
    vec![
        address(
            "Ana García",
            "Calle de Alcalá 123, 4º B",
            Some("28009"),
            "Madrid",
            Some("Madrid"),
            "ES",
        ),
        address(
            "Éric Lefèvre",
            "18 rue des Trois-Frères",
            Some("75018"),
            "Paris",
            None,
            "FR",
        ),
        address(
            "Jürgen Weiß",
            "Schönhauser Allee 36",
            Some("10435"),
            "Berlin",
            None,
            "DE",
        ),
        address(
            "Γιώργος Παπαδόπουλος",
            "Οδός Ερμού 25",
            Some("105 63"),
            "Αθήνα",
            None,
            "GR",
        ),
        address(
            "Łucja Wiśniewska",
            "ul. Floriańska 14/3",
            Some("31-021"),
            "Kraków",
            None,
            "PL",
        ),
        address(
            "Ирина Смирнова",
            "ул. Тверская, д. 7, кв. 12",
            Some("125009"),
            "Москва",
            Some("Москва"),
            "RU",
        ),
        address(
            "Ayşe Yılmaz",
            "İstiklal Caddesi No: 112",
            Some("34433"),
            "İstanbul",
            Some("Beyoğlu"),
            "TR",
        ),
        address(
            "田中 美咲",
            "丸の内1-9-2",
            Some("100-0005"),
            "千代田区",
            Some("東京都"),
            "JP",
        ),
        address(
            "أحمد المنصوري",
            "شارع الشيخ زايد، برج 5",
            None,
            "دبي",
            Some("دبي"),
            "AE",
        ),
        address(
            "Sofía Ruiz",
            "350 Fifth Avenue, Apt 21C",
            Some("10118"),
            "New York",
            Some("NY"),
            "US",
        ),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_demo_address_can_be_shipped_to() {
        for a in super::buyers()
            .into_iter()
            .chain([super::madrid(), super::barcelona()])
        {
            let issues = depot_protocol::address::issues(&a, None);
            assert!(issues.is_empty(), "{a:?}: {issues:?}");
        }
    }
}
