package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
)

// maxAfter bounds ?after= (event sequences are small).
const maxAfter = 1 << 30

// runEvents is GET /runs/:uuid/events?after=N: the run's events with sequence > N, ascending,
// as a JSON list. N defaults to -1 (all); anything but an integer in [-1, 2^30] is 400.
func (a *API) runEvents(c echo.Context) error {
	uuid, err := runUUID(c)
	if err != nil {
		return err
	}
	after := -1
	if q := c.QueryParams()["after"]; len(q) > 0 {
		n, err := strconv.Atoi(q[0])
		if len(q) != 1 || err != nil || n < -1 || n > maxAfter {
			return invalid("after must be one integer between -1 and 1073741824")
		}
		after = n
	}
	evs, err := a.rt.Events(c.Request().Context(), actorOf(c), uuid, after)
	if err != nil {
		return fromRuntime(err)
	}
	out := make([]eventJSON, len(evs))
	for i, e := range evs {
		out[i] = toEventJSON(e)
	}
	return c.JSON(http.StatusOK, out)
}
