import Foundation

/// Patients' rows (issue #25's seam): what the other areas ask about a patient. The patient's
/// own reads and writes (sealed personal data) move here with the client area.
public protocol ClientReading {
    /// Whether a patient exists, without opening their personal data.
    func clientExists(id: Int64) throws -> Bool
}

public protocol ClientWriting: ClientReading {}
