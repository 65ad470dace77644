import Foundation

extension ClientController {
    /// The patient's own zone, in which every time that is not an appointment's is shown to them
    /// (the inbox, the devices signed in, the access log): the zone of their registered address,
    /// from the time-zone boundaries (`ZoneFinder`). UTC when the address has no coordinates or
    /// there is no zone data; the fronts name the zone either way (`DateText.dateTimeWithZone`).
    /// An appointment's time stays in its clinic's zone.
    public func timeZone(of client: Client) -> TimeZone {
        guard let point = client.coordinate, let finder = try? geocoding.zones?.load(),
              let identifier = try? finder.zone(at: point), let zone = TimeZone(identifier: identifier)
        else { return Self.utc }
        return zone
    }

    static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
}
