package com.example.orders;

import io.cerberus.spring.WithDistributedLock;
import org.springframework.stereotype.Service;

@Service
public class Shipping {

    // one instance at a time ships a given order; another waits up to 2 s, then gets 409
    @WithDistributedLock(key = "'order:' + #orderId", waitTime = "2s")
    public String ship(long orderId) {
        return "order " + orderId + " shipped";
    }
}
