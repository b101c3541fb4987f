package breakerimpl

// MaxRecordedInFlight is maxRecordedInFlight, for the tests.
const MaxRecordedInFlight = maxRecordedInFlight
