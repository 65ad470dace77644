import Foundation

/// A clinic's IANA time zone when neither its directory row nor the gazetteer gives one (no
/// gazetteer place within reach, or no gazetteer at all): the zone of its U.S. state or
/// territory, else a whole-hour zone from its longitude. States that span two zones get the
/// zone of most of their area (see docs/DATA.md).
public enum ZoneApproximation {
    static let byState: [String: String] = [
        "AL": "America/Chicago", "AK": "America/Anchorage", "AZ": "America/Phoenix",
        "AR": "America/Chicago", "CA": "America/Los_Angeles", "CO": "America/Denver",
        "CT": "America/New_York", "DE": "America/New_York", "DC": "America/New_York",
        "FL": "America/New_York", "GA": "America/New_York", "HI": "Pacific/Honolulu",
        "ID": "America/Boise", "IL": "America/Chicago", "IN": "America/Indiana/Indianapolis",
        "IA": "America/Chicago", "KS": "America/Chicago", "KY": "America/New_York",
        "LA": "America/Chicago", "ME": "America/New_York", "MD": "America/New_York",
        "MA": "America/New_York", "MI": "America/Detroit", "MN": "America/Chicago",
        "MS": "America/Chicago", "MO": "America/Chicago", "MT": "America/Denver",
        "NE": "America/Chicago", "NV": "America/Los_Angeles", "NH": "America/New_York",
        "NJ": "America/New_York", "NM": "America/Denver", "NY": "America/New_York",
        "NC": "America/New_York", "ND": "America/Chicago", "OH": "America/New_York",
        "OK": "America/Chicago", "OR": "America/Los_Angeles", "PA": "America/New_York",
        "RI": "America/New_York", "SC": "America/New_York", "SD": "America/Chicago",
        "TN": "America/Chicago", "TX": "America/Chicago", "UT": "America/Denver",
        "VT": "America/New_York", "VA": "America/New_York", "WA": "America/Los_Angeles",
        "WV": "America/New_York", "WI": "America/Chicago", "WY": "America/Denver",
        "PR": "America/Puerto_Rico", "VI": "America/St_Thomas", "GU": "Pacific/Guam",
        "MP": "Pacific/Saipan", "AS": "Pacific/Pago_Pago", "PW": "Pacific/Palau",
    ]

    public static func zone(state: String, longitude: Double) -> String {
        let code = state.trimmingCharacters(in: .whitespaces).uppercased()
        // The Aleutians west of 169.5°W keep Hawaii-Aleutian time.
        if code == "AK", longitude < -169.5 { return "America/Adak" }
        if let zone = byState[code] { return zone }
        // Etc/GMT zones have inverted signs: Etc/GMT+5 is UTC−5.
        let hours = Int((longitude / 15).rounded())
        if hours == 0 { return "Etc/UTC" }
        return hours > 0 ? "Etc/GMT-\(min(hours, 12))" : "Etc/GMT+\(min(-hours, 12))"
    }
}
