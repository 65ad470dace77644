import Foundation

/// Appointments, their history, and the directory rows booking reads (issue #25's seam).
public protocol AppointmentReading {}

public protocol AppointmentWriting: AppointmentReading {}
