package views

// CancelConfirm is the confirmation page before a run is cancelled.
type CancelConfirm struct {
	RunUUID       string
	Configuration string
	Status        string
	// Waiting: cancelling drops the pending decision or form.
	Waiting bool
}
