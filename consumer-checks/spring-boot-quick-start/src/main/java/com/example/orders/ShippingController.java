package com.example.orders;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
public class ShippingController {
    private final Shipping shipping;

    public ShippingController(Shipping shipping) {
        this.shipping = shipping;
    }

    @PostMapping("/orders/{orderId}/ship")
    public String ship(@PathVariable long orderId) {
        return shipping.ship(orderId);
    }
}
